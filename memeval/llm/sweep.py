"""A sweep: the same cases answered by several models (and engine profiles) under one budget, on
the farm, like `memeval run`. This is its plan and its report; `memeval_farm.sweep` runs it.

Each variant, a model under an engine profile, is a run of its own in the store, labelled
`<sweep>/<variant>` and created with its whole plan before anything is dispatched. Every
variant's cases then go out as one chord, model-interleaved, case by case
(`memeval.evaluation.columns`): when the budget runs out mid-sweep every variant has answered
the same cases, give or take the few in flight, so the comparison on the common subset uses
nearly everything that was paid for.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memeval.engines.registry import validate as validate_engine
from memeval.errors import UsageError
from memeval.evaluation.columns import ColumnPlan
from memeval.evaluation.jobs import planned
from memeval.evaluation.selection import Case, Selection
from memeval.llm.estimate import PlannedCall, planned_calls
from memeval.llm.prompt import MAX_TOKENS, PROMPT_VERSION
from memeval.report.compare import CompareReport, GroupBy, common_cases, compare
from memeval.results import CaseStatus, RunReport
from memeval.runner import RunOptions
from memeval.scoring.kpis import kpis
from memeval.store import PlannedCase, Store
from memeval.suites.common import Slug

SWEEP_SCOPE = "sweep:"  # a sweep's budget scope is this and the sweep id


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


def profiles_for(given: list[str] | None, engine: str) -> list[Profile]:
    """The engine profiles swept, read and checked before anything starts (also for an
    estimate, which never reaches the farm); none given: the one engine."""
    profiles = [parse_profile(p, engine) for p in given or []] or [
        Profile(name=engine, engine=engine)
    ]
    if len({p.name for p in profiles}) < len(profiles):
        raise UsageError("two profiles share a name", fix="name each --profile differently")
    for each in profiles:
        validate_engine(each.engine)
    return profiles


class Variant(Model):
    """One column of the comparison: a model answering under an engine profile, as one run."""

    name: str
    model: str
    profile: Profile
    run_id: str
    label: str = Field(description="`<sweep>/<variant>`: the sweep's runs sort and group together.")


def sweep_runs(store: Store, sweep_id: str) -> list[str]:
    """The ids of a sweep's runs, numbered from 0 as `variants` names them."""
    ids: list[str] = []
    while store.get_run(f"{sweep_id}.{len(ids)}") is not None:
        ids.append(f"{sweep_id}.{len(ids)}")
    return ids


def variants(sweep_id: str, models: list[str], profiles: list[Profile]) -> list[Variant]:
    out: list[Variant] = []
    for p in profiles:
        for m in models:
            name = m if len(profiles) == 1 else f"{p.name}/{m}"
            out.append(
                Variant(
                    name=name,
                    model=m,
                    profile=p,
                    run_id=f"{sweep_id}.{len(out)}",
                    label=f"{sweep_id}/{name}",
                )
            )
    return out


class SweptCases(BaseModel):
    """A sweep's cases as one pass over its selection leaves them: each case's plan entry and
    the model calls a trial of it makes (the estimate printed before anything is spent),
    never the case; the bodies are read again as they are sent."""

    plan: ColumnPlan
    calls: list[PlannedCall]


def read_cases(selection: Selection) -> SweptCases:
    once: list[PlannedCase] = []

    def noted() -> Iterator[Case]:
        for case in selection.cases():
            once.append(planned(case, 0))
            yield case

    calls = planned_calls(noted())
    return SweptCases(plan=ColumnPlan(selection=selection, once=once), calls=calls)


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


class SweepRun(Model):
    variant: Variant
    report: RunReport
    answers: int = Field(
        description="Graded model answers, probes and queries, on the common subset."
    )
    model_answer: float | None = Field(description="Share of those answers graded right.")


class SweepReport(Model):
    sweep_id: str
    suite: str
    prompt_version: str
    started_at: datetime
    finished_at: datetime
    interrupted: bool = Field(description="Ctrl-C'd: the runs hold what landed before it.")
    budget_usd: float
    spent_usd: float = Field(description="What the answering models billed, from the store.")
    budget_closed: str | None = Field(description="Why paid calls stopped; None: never stopped.")
    planned: int = Field(description="Case runs planned: cases × trials × variants.")
    done: int
    skipped_budget: int
    errors: int = Field(description="Case runs that errored, were lost, or never reported.")
    coverage: float = Field(description="Share of the cases every variant completed.")
    common: list[str] = Field(description="Ids of the cases every variant completed.")
    comparison: CompareReport | None = Field(
        description="Noise-aware verdicts on the common subset, against the first variant; "
        "None with a single variant, or no case in common."
    )
    runs: list[SweepRun]


def sweep_report(
    sweep_id: str,
    config: SweepConfig,
    plan: list[Variant],
    reports: list[RunReport],
    *,
    cases: int,
    started: datetime,
    interrupted: bool,
    budget_closed: str | None,
) -> SweepReport:
    """The runs as folded from the store, compared under their variant names: each run's label
    carries the sweep id, which every variant shares and a reader need not see in each row."""
    named = [r.model_copy(update={"label": v.name}) for v, r in zip(plan, reports, strict=True)]
    common = common_cases(named)
    everything = [c for r in reports for c in r.cases]
    planned = cases * config.trials * len(plan)
    done = sum(c.status is CaseStatus.done for c in everything)
    skipped = sum(c.status is CaseStatus.skipped_budget for c in everything)
    return SweepReport(
        sweep_id=sweep_id,
        suite=config.suite,
        prompt_version=PROMPT_VERSION,
        started_at=started,
        finished_at=datetime.now(UTC),
        interrupted=interrupted,
        budget_usd=config.budget_usd,
        spent_usd=sum(c.answerer_usd_micros for c in everything) / 1e6,
        budget_closed=budget_closed,
        planned=planned,
        done=done,
        skipped_budget=skipped,
        errors=planned - done - skipped,
        coverage=round(len(common) / cases, 4) if cases else 0.0,
        common=common,
        comparison=compare(named, by=GroupBy.label) if len(named) > 1 and common else None,
        runs=[_run(v, r, set(common)) for v, r in zip(plan, reports, strict=True)],
    )


def _run(variant: Variant, report: RunReport, common: set[str]) -> SweepRun:
    """The model's grade on the common subset only, so every variant answers the same questions."""
    cases = [c for c in report.cases if c.case_id in common and c.status is CaseStatus.done]
    graded = next(k for k in kpis(cases) if k.name == "model_answer")
    return SweepRun(variant=variant, report=report, answers=graded.n, model_answer=graded.value)
