"""A run's model, rate and budget options, turned into what its tasks carry.

Everything that can fail (a bad rate, a price missing under a budget, a key that is not set)
fails here, before the run exists, so a typo never costs a half-finished run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import BaseModel, Field, field_validator
from rich.console import Console

from memeval.errors import UsageError
from memeval.llm.judge import JUDGE_MAX_TOKENS, JUDGE_PROMPT_VERSION, JudgeMode
from memeval.llm.rates import Rate, parse_rates
from memeval.llm.setup import budget_micros, prepare
from memeval.llm.shared import BudgetState, OpenShared
from memeval.llm.spec import LlmSpec
from memeval.llm.sweep import SWEEP_SCOPE, sweep_runs
from memeval.store import Store

DEFAULT_MODEL = "openai/gpt-4.1-mini"


class ModelOptions(BaseModel):
    """What `memeval run`'s model flags (and `memeval.evaluate(llm=...)`) ask for; the
    fields are None when not given, so options given without `llm` can be named."""

    llm: bool = False
    model: str | None = None
    judge: list[str] = Field(default_factory=list)
    judge_mode: JudgeMode = JudgeMode.strict
    base_url: str | None = None
    max_tokens: int | None = None
    prices: list[str] = Field(default_factory=list)
    rates: list[str] = Field(default_factory=list)
    budget_usd: float | None = None
    model_timeout: float | None = None

    @field_validator("judge", mode="before")
    @classmethod
    def _one_judge(cls, value: object) -> object:
        """`judge="a/model"` names one judge; None names none."""
        if value is None:
            return []
        return [value] if isinstance(value, str) else value


class ModelPlan(BaseModel):
    llm: LlmSpec | None
    rates: list[Rate]
    budget_micros: int | None
    spent_micros: int = 0  # what a resumed run's results already paid
    raise_cap: bool = False  # a resume given a larger budget lifts the live scope's cap

    def shared_opener(self, console: Console) -> Callable[[OpenShared], None] | None:
        """The same, in whatever state the run's cases will share (Redis, or this process's
        memory for an in-process run)."""
        cap = self.budget_micros
        if cap is None or self.llm is None:
            return None
        scopes = self.llm.budget_scopes

        async def open_scope(shared: OpenShared, each: str) -> BudgetState:
            async with shared() as state:
                return await state.budget([each]).open(
                    each, cap, spent_micros=self.spent_micros, raise_cap=self.raise_cap
                )

        def open_in(shared: OpenShared) -> None:
            for each in scopes:
                state = asyncio.run(open_scope(shared, each))
                console.print(
                    f"budget: ${state.cap_usd:.2f}, ${state.spent_usd:.4f} spent so far",
                    highlight=False,
                )

        return open_in


def scope(run_id: str) -> str:
    return f"run:{run_id}"


def paid_so_far(store: Store, run_id: str, scopes: list[str]) -> int:
    """What the run's paid calls already took from its budget: a sweep's budget is shared by
    all its runs, so each of them counts. An embedded farm's Redis died with the last session,
    so this is all a resume has to reopen the budget with. The paid-call records count every
    attempt of every session, including calls cut off mid-flight (at their holds); the case
    results keep only each case's latest attempt, and are read only for runs stored before
    those records existed."""
    runs = [run_id]
    for each in scopes:
        if each.startswith(SWEEP_SCOPE):
            runs = sweep_runs(store, each.removeprefix(SWEEP_SCOPE))
    recorded = store.paid_micros(runs)
    stored = sum(r.answerer_usd_micros for each in runs for r in store.case_results(each))
    return max(recorded, stored)


def plan_models(run_id: str, options: ModelOptions, console: Console) -> ModelPlan:
    cap = budget_micros(options.budget_usd)
    parsed = parse_rates(options.rates)
    if not options.llm:
        _no_model_options(options)
        return ModelPlan(llm=None, rates=parsed, budget_micros=None)
    name = options.model or DEFAULT_MODEL
    given = {"max_tokens": options.max_tokens} if options.max_tokens is not None else {}
    setup = asyncio.run(
        prepare(
            list(dict.fromkeys([name, *options.judge])),
            base_url=options.base_url,
            prices=options.prices,
            rates=options.rates,
            budget_usd=options.budget_usd,
            scope=scope(run_id) if cap is not None else None,
            timeout_s=options.model_timeout,
            **given,
        )
    )
    for warning in setup.warnings:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    spec = setup.specs[name]
    spec = spec.model_copy(
        update={"judges": judge_specs(setup.specs, options.judge), "judge_mode": options.judge_mode}
    )
    return ModelPlan(llm=spec, rates=parsed, budget_micros=cap)


def judge_specs(specs: dict[str, LlmSpec], names: list[str]) -> list[LlmSpec]:
    """Each `--judge` model as a judge: one word of reply, the judge prompt's version."""
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UsageError(
            f"--judge {', '.join(repeated)} is given twice",
            fix="name each judge once; two or three different models make a majority",
        )
    return [
        specs[n].model_copy(
            update={"max_tokens": JUDGE_MAX_TOKENS, "prompt_version": JUDGE_PROMPT_VERSION}
        )
        for n in names
    ]


def _no_model_options(options: ModelOptions) -> None:
    stray = [
        name
        for name, value in (
            ("--model", options.model),
            ("--judge", options.judge or None),
            ("--judge-mode", None if options.judge_mode is JudgeMode.strict else "lenient"),
            ("--budget-usd", options.budget_usd),
            ("--base-url", options.base_url),
            ("--max-tokens", options.max_tokens),
            ("--model-timeout", options.model_timeout),
        )
        if value is not None
    ]
    if options.prices:
        stray.append("--price")
    if stray:
        named = " and ".join([", ".join(stray[:-1]), stray[-1]] if len(stray) > 1 else stray)
        raise UsageError(
            f"{named} {'applies' if len(stray) == 1 else 'apply'} only when a model answers "
            "(--llm)",
            fix=f"add --llm, or drop {'it' if len(stray) == 1 else 'them'}",
        )
