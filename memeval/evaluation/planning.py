"""A run before any case is sent: a new run recorded with its whole plan, or a stopped run
reopened with the cases it still lacks. Either way the run exists in the store first, so
`--resume` can always complete it."""

from __future__ import annotations

import os
import secrets
from datetime import UTC, datetime

from pydantic import BaseModel, Field
from rich.console import Console

from memeval.engines.registry import parse_ref
from memeval.errors import UsageError
from memeval.evaluation.jobs import CaseJob, plan_run
from memeval.evaluation.models import ModelOptions, ModelPlan, paid_so_far, plan_models
from memeval.evaluation.preflight import check_engine
from memeval.llm.setup import budget_micros
from memeval.report.stored import ref_key, require_run
from memeval.runner import RunOptions
from memeval.runner.host import HostLimits
from memeval.store import CaseKey, RunRecord, Store
from memeval.suites.catalog import Suite, resolve
from memeval.suites.fixture import Dimension, Fixture
from memeval.suites.haystack import Haystack, expand
from memeval.suites.scenario import Scenario
from memeval.summary import plural, subset_name


class CaseRef(BaseModel):
    case_id: str
    trial: int

    @property
    def key(self) -> str:
        return ref_key(CaseKey(self.case_id, self.trial))


class RunPlan(BaseModel):
    run_id: str
    label: str
    engine: str
    suite: str
    options: RunOptions
    cases: list[CaseRef]
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


def new_run_id() -> str:
    """Sortable by start time, unique without coordination."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def select(suite: Suite, only: list[str], dimensions: list[str]) -> list[Scenario | Fixture]:
    """Filter by `--only` (a case id, or its last part) and `--dimension`."""
    for name in dimensions:
        if name not in Dimension.__members__:
            raise UsageError(
                f"unknown dimension `{name}`",
                fix=f"use one of: {', '.join(d.value for d in Dimension)}",
            )
    cases = [c.case for c in suite.cases]
    if dimensions:
        cases = [c for c in cases if isinstance(c, Fixture) and c.dimension.value in dimensions]
    if only:
        wanted = set(only)
        picked = [c for c in cases if c.id in wanted or c.id.rsplit("/", 1)[-1] in wanted]
        known = {c.id for c in picked} | {c.id.rsplit("/", 1)[-1] for c in picked}
        unknown = sorted(wanted - known)
        if unknown:
            raise UsageError(
                f"no case matches --only {', '.join(unknown)}",
                fix="list the case ids with `memeval suites list --cases`",
            )
        cases = picked
    if not cases:
        raise UsageError("the selection holds no case", fix="widen --only / --dimension")
    return cases


class RunRequest(BaseModel):
    """A new run as asked for, its engine already a registry reference."""

    engine: str = "reference"
    suite: str = "all"
    only: list[str] = Field(default_factory=list)
    dimension: list[str] = Field(default_factory=list)
    trials: int | None = None
    keep: bool = False
    label: str | None = None
    models: ModelOptions = Field(default_factory=ModelOptions)
    host: HostLimits | None = None
    haystack: Haystack | None = None


class PlannedRun(BaseModel):
    """A run in the store, and the cases still to send for it."""

    run_id: str
    label: str
    jobs: list[CaseJob]
    models: ModelPlan


def concurrency(workers: int | None) -> int:
    """Local worker processes, or in-process cases at once: one per CPU unless given."""
    if workers is None:
        return os.cpu_count() or 1
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, not {workers}")
    return workers


def plan_new(store: Store, request: RunRequest, console: Console) -> PlannedRun:
    """The engine is checked by the caller, who knows where it will run."""
    run_id = new_run_id()
    label = request.label or f"{parse_ref(request.engine).name}-{run_id}"
    models = plan_models(run_id, request.models, console)
    if request.trials is not None and request.trials < 1:
        raise UsageError(f"--trials must be at least 1, not {request.trials}")
    jobs = plan_run(
        store,
        run_id=run_id,
        label=label,
        engine=request.engine,
        suite=request.suite,
        cases=_swept(select(resolve(request.suite), request.only, request.dimension), request),
        trials=request.trials or 1,
        options=RunOptions(
            keep=request.keep,
            llm=models.llm,
            rates=models.rates,
            host=request.host,
            haystack=request.haystack,
        ),
        budget_micros=models.budget_micros,
        subset=subset_name(request.only, request.dimension),
    )
    # The store gives a taken label the first free suffix: reports never overwrite a run's.
    label = require_run(store, run_id).label
    if request.label and label != request.label:
        console.print(f"label `{request.label}` is taken: this run is `{label}`", highlight=False)
    return PlannedRun(run_id=run_id, label=label, jobs=jobs, models=models)


def _swept(cases: list[Scenario | Fixture], request: RunRequest) -> list[Scenario | Fixture]:
    return cases if request.haystack is None else expand(cases, request.haystack)


def plan_resume(
    store: Store, run_id: str, budget_usd: float | None, *, check_here: bool, console: Console
) -> PlannedRun:
    """`check_here`: the cases run beside this process (local workers, or in it), so the
    engine's own preflight runs before the run reopens."""
    if check_here:
        check_engine(require_run(store, run_id).engine, remote=False)
    jobs, record = _reopen(store, run_id, console)
    cap = resumed_budget(store, record, budget_usd)
    models = ModelPlan(llm=None, rates=[], budget_micros=None)
    if jobs and jobs[0].options.llm is not None:
        models = ModelPlan(
            llm=jobs[0].options.llm,
            rates=jobs[0].options.rates,
            budget_micros=cap,
            spent_micros=paid_so_far(store, run_id, jobs[0].options.llm.budget_scopes),
            raise_cap=budget_usd is not None,
        )
    return PlannedRun(run_id=run_id, label=record.label, jobs=jobs, models=models)


def resumed_budget(store: Store, record: RunRecord, budget_usd: float | None) -> int | None:
    """The run's budget, or the larger one this resume gives it (stored for later resumes)."""
    recorded = record.options.get("budget_micros")
    if budget_usd is None:
        return recorded
    cap = budget_micros(budget_usd)
    if recorded is None or cap is None or cap <= recorded:
        had = "has no budget" if recorded is None else f"has a ${recorded / 1e6:g} budget"
        raise UsageError(
            f"--budget-usd on --resume raises a run's budget, and run `{record.id}` {had}",
            fix="give a larger --budget-usd, or drop it to resume within the run's own",
        )
    store.update_run_options(record.id, {"budget_micros": cap})
    return cap


def _reopen(store: Store, run_id: str, console: Console) -> tuple[list[CaseJob], RunRecord]:
    """The run's cases without a done result, rebuilt from its suite; reopens the run."""
    record = require_run(store, run_id)
    missing = store.missing_cases(run_id)
    cases: dict[str, Scenario | Fixture] = {}
    options = RunOptions.model_validate(record.options)
    if missing:
        found = [located.case for located in resolve(record.suite_at).cases]
        if options.haystack is not None:  # the variants the run was planned with
            found = expand(found, options.haystack)
        cases = {case.id: case for case in found}
    gone = sorted({p.case_id for p in missing} - cases.keys())
    if gone:
        raise UsageError(
            f"run `{run_id}` needs cases its suite `{record.suite}` no longer holds: "
            + ", ".join(gone),
            fix="restore those case files, or start a new run",
        )
    store.reopen_run(run_id)
    jobs = [
        CaseJob(
            run_id=run_id,
            engine=record.engine,
            case=cases[p.case_id],
            trial=p.trial,
            options=options,
            label=record.label,
        )
        for p in missing
    ]
    console.print(
        f"resuming {run_id}: {len(jobs)} of {plural(record.planned_count, 'case')} to run"
    )
    return jobs, record
