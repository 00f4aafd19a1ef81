"""A sweep: the same cases answered by several models (and engine profiles) under one budget.

Jobs go out model-interleaved, case by case: every variant gets case 1, then every variant gets
case 2, and so on. When the budget runs out mid-sweep, every variant has answered the same
cases, give or take the last few in flight, so the comparison on the common subset uses nearly
everything that was paid for, and no model is compared on easier cases than another.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memeval.engines.base import Engine
from memeval.errors import UsageError
from memeval.llm.answer import Answerer
from memeval.llm.client import LlmClient
from memeval.llm.estimate import estimate, planned_calls
from memeval.llm.prompt import MAX_TOKENS, PROMPT_VERSION
from memeval.llm.setup import prepare
from memeval.plan import CaseRef, new_run_id
from memeval.results import CaseResult, CaseStatus, RunReport
from memeval.runner import RunOptions, run_case
from memeval.scoring.kpis import composite, dimension_scores
from memeval.suites.common import Slug
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario
from memeval.summary import build_report
from workers.budget import Budget, BudgetState, connect_redis, usd_to_micros
from workers.limiter import Limiter, RateKind, rate_for, throttle_engine


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Profile(Model):
    """A named set of run flags, swept like a model: `fast: --engine reference --k 3`."""

    name: Slug
    engine: str = Field(min_length=1)
    k: int | None = Field(default=None, ge=1)

    def options(self, base: RunOptions) -> RunOptions:
        return base if self.k is None else base.model_copy(update={"k": self.k})


def parse_profile(text: str, default_engine: str) -> Profile:
    name, sep, flags = text.partition(":")
    name = name.strip()
    fix = "write NAME: FLAGS, e.g. `small: --engine reference --k 3` (flags: --engine, --k)"
    if not sep:
        raise UsageError(f"cannot read profile `{text}`", fix=fix)
    words = shlex.split(flags)
    values: dict[str, str] = {}
    while words:
        flag = words.pop(0)
        if flag not in ("--engine", "--k") or not words:
            raise UsageError(f"profile `{name}`: cannot use `{flag}`", fix=fix)
        values[flag[2:]] = words.pop(0)
    try:
        return Profile.model_validate(
            {"name": name, "engine": values.get("engine", default_engine), "k": values.get("k")}
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"profile `{name}`: {first['loc'][0]}: {first['msg']}", fix=fix) from None


class Variant(Model):
    """One column of the comparison: a model answering under an engine profile, as one run."""

    name: str
    model: str
    profile: Profile
    run_id: str


def variants(sweep_id: str, models: list[str], profiles: list[Profile]) -> list[Variant]:
    out: list[Variant] = []
    for p in profiles:
        for m in models:
            name = m if len(profiles) == 1 else f"{p.name}/{m}"
            out.append(Variant(name=name, model=m, profile=p, run_id=f"{sweep_id}.{len(out)}"))
    return out


class Job(Model):
    variant: str
    case: CaseRef


def interleave(cases: list[CaseRef], names: list[str]) -> list[Job]:
    """Case-major, variant-minor: any prefix of the result covers every variant equally, to
    within one case, which is what keeps a budget cut fair."""
    return [Job(variant=v, case=c) for c in cases for v in names]


def common_subset(results: dict[str, list[CaseResult]]) -> list[str]:
    """`case#trial` keys that every variant completed, in sorted order."""
    done = [
        {f"{r.case_id}#{r.trial}" for r in rs if r.status is CaseStatus.done}
        for rs in results.values()
    ]
    return sorted(set.intersection(*done)) if done else []


class ComparisonRow(Model):
    variant: str
    model: str
    profile: str
    cases: int
    answers: int = Field(description="Graded model answers on the common subset.")
    model_answer: float | None = Field(description="Share of those answers graded right.")
    extractive_answer: float | None
    pack_hit: float | None
    composite: float | None
    answerer_usd: float = Field(description="Model spend on the common subset.")


def compare(variant: Variant, cases: list[CaseResult]) -> ComparisonRow:
    probes = [p for c in cases for p in c.probes if p.scored]
    graded = [p.model_ok for p in probes if p.model_ok is not None]
    graded += [q.model_ok for c in cases for q in c.queries if q.model_ok is not None]
    return ComparisonRow(
        variant=variant.name,
        model=variant.model,
        profile=variant.profile.name,
        cases=len(cases),
        answers=len(graded),
        model_answer=_share(graded),
        extractive_answer=_share([p.extractive_ok for p in probes]),
        pack_hit=_share([p.hit for p in probes]),
        composite=composite(dimension_scores(cases)),
        answerer_usd=sum(c.answerer_usd_micros for c in cases) / 1e6,
    )


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


class SweepRun(Model):
    variant: Variant
    report: RunReport


class SweepReport(Model):
    sweep_id: str
    suite: str
    prompt_version: str
    started_at: datetime
    finished_at: datetime
    budget_usd: float
    spent_usd: float
    budget_closed: str | None = Field(description="Why paid calls stopped; None: never stopped.")
    planned: int = Field(description="Case runs planned: cases × trials × variants.")
    done: int
    skipped_budget: int
    errors: int
    coverage: float = Field(description="Share of cases every variant completed.")
    common: list[str] = Field(description="`case#trial` keys of the common subset.")
    comparison: list[ComparisonRow]
    runs: list[SweepRun]


RunJob = Callable[[Job], Awaitable[CaseResult]]


async def execute(
    jobs: list[Job],
    run_one: RunJob,
    *,
    concurrency: int,
    on_result: Callable[[Job, CaseResult], None] | None = None,
) -> list[tuple[Job, CaseResult]]:
    """Start jobs strictly in order with at most `concurrency` in flight, so the interleaving
    survives; once the budget closes, the jobs left are recorded as skipped at once."""
    queue = list(reversed(jobs))
    landed: list[tuple[Job, CaseResult]] = []

    async def worker() -> None:
        while queue:
            job = queue.pop()
            result = await run_one(job)
            landed.append((job, result))
            if on_result is not None:
                on_result(job, result)

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(jobs))))))
    return landed


async def run_sweep(
    *,
    sweep_id: str,
    suite: str,
    cases: dict[str, Scenario | Fixture],
    refs: list[CaseRef],
    plan: list[Variant],
    engines: dict[str, Engine],
    answerers: dict[str, Answerer],
    options: RunOptions,
    budget_state: Callable[[], Awaitable[BudgetState]],
    concurrency: int = 8,
    on_result: Callable[[Job, CaseResult], None] | None = None,
) -> SweepReport:
    """Run every variant over `refs` as one interleaved sweep. `engines` is keyed by profile
    name and `answerers` by variant name; the caller owns and closes both."""
    started = datetime.now(UTC)
    by_name = {v.name: v for v in plan}

    async def run_one(job: Job) -> CaseResult:
        variant = by_name[job.variant]
        return await run_case(
            cases[job.case.case_id],
            engines[variant.profile.name],
            run_id=variant.run_id,
            trial=job.case.trial,
            options=variant.profile.options(options),
            answerer=answerers[variant.name],
        )

    landed = await execute(
        interleave(refs, list(by_name)), run_one, concurrency=concurrency, on_result=on_result
    )
    finished = datetime.now(UTC)
    results: dict[str, list[CaseResult]] = {v.name: [] for v in plan}
    for job, result in landed:
        results[job.variant].append(result)
    common = common_subset(results)
    keys = set(common)
    state = await budget_state()
    everything = [r for rs in results.values() for r in rs]
    return SweepReport(
        sweep_id=sweep_id,
        suite=suite,
        prompt_version=PROMPT_VERSION,
        started_at=started,
        finished_at=finished,
        budget_usd=state.cap_usd,
        spent_usd=state.spent_usd,
        budget_closed=state.closed,
        planned=len(refs) * len(plan),
        done=sum(r.status is CaseStatus.done for r in everything),
        skipped_budget=sum(r.status is CaseStatus.skipped_budget for r in everything),
        errors=sum(r.status is CaseStatus.error for r in everything),
        coverage=round(len(common) / len(refs), 4) if refs else 0.0,
        common=common,
        comparison=[
            compare(v, [r for r in results[v.name] if f"{r.case_id}#{r.trial}" in keys])
            for v in plan
        ],
        runs=[
            SweepRun(
                variant=v,
                report=build_report(
                    run_id=v.run_id,
                    label=f"{sweep_id} {v.name}",
                    engine=v.profile.engine,
                    suite=suite,
                    started_at=started,
                    finished_at=finished,
                    cases=results[v.name],
                    planned=[ref.key for ref in refs],
                ),
            )
            for v in plan
        ],
    )


class SweepConfig(Model):
    """Everything a sweep is asked to do; validated before anything is spent."""

    models: list[str] = Field(min_length=1)
    budget_usd: float = Field(gt=0)
    profiles: list[Profile] = Field(min_length=1)
    suite: str
    trials: int = Field(default=1, ge=1)
    rates: list[str] = Field(default_factory=list)
    prices: list[str] = Field(default_factory=list)
    base_url: str | None = None
    max_tokens: int = Field(default=MAX_TOKENS, ge=1)
    concurrency: int = Field(default=8, ge=1)
    redis_url: str


async def sweep(
    config: SweepConfig,
    cases: list[Scenario | Fixture],
    create_engine: Callable[[str], Engine],
    *,
    say: Callable[[str], None] = lambda _: None,
    on_result: Callable[[Job, CaseResult], None] | None = None,
) -> SweepReport:
    """Price the models, check the key, open the budget, then run the interleaved sweep.
    Every start-up check comes before the first engine is built or the first cent spent."""
    sweep_id = new_run_id()
    scope = f"sweep:{sweep_id}"
    setup = await prepare(
        config.models,
        base_url=config.base_url,
        max_tokens=config.max_tokens,
        prices=config.prices,
        rates=config.rates,
        budget_usd=config.budget_usd,
        scope=scope,
    )
    for warning in setup.warnings:
        say(f"warning: {warning}")
    plan = variants(sweep_id, config.models, config.profiles)
    for row in estimate(
        planned_calls(cases),
        trials=config.trials * len(config.profiles),
        prices={m: s.price for m, s in setup.specs.items()},
        max_tokens=config.max_tokens,
    ):
        say(
            f"{row.model}: {row.calls} calls, expected ${row.usd_expected or 0:.4f} "
            f"(at most ${row.usd_max or 0:.4f})"
        )
    say(f"sweep {sweep_id}: {len(plan)} variants, budget ${config.budget_usd:.2f}")
    async with AsyncExitStack() as stack:
        redis = await connect_redis(config.redis_url)
        stack.push_async_callback(redis.aclose)
        budget = Budget(redis, [scope])
        await budget.open(scope, usd_to_micros(config.budget_usd))
        client = LlmClient(setup.specs[config.models[0]].base_url)
        stack.push_async_callback(client.aclose)
        limiter = Limiter(redis)
        engine_rate = rate_for(setup.specs[config.models[0]].rates, RateKind.engine)
        engines: dict[str, Engine] = {}
        for profile in config.profiles:
            engine = create_engine(profile.engine)
            stack.push_async_callback(engine.close)
            engines[profile.name] = throttle_engine(engine, limiter, engine_rate)
        report = await run_sweep(
            sweep_id=sweep_id,
            suite=config.suite,
            cases={c.id: c for c in cases},
            refs=[CaseRef(case_id=c.id, trial=t) for t in range(config.trials) for c in cases],
            plan=plan,
            engines=engines,
            answerers={
                v.name: Answerer(setup.specs[v.model], client, budget=budget, limiter=limiter)
                for v in plan
            },
            options=RunOptions(),
            budget_state=lambda: budget.state(scope),
            concurrency=config.concurrency,
            on_result=on_result,
        )
    return report
