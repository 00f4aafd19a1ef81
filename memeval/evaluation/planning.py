"""A run before any case is sent: a new run recorded with its whole plan, or a stopped run
reopened with the cases it still lacks. Either way the run exists in the store first, so
`--resume` can always complete it."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime

from pydantic import BaseModel, Field
from rich.console import Console

from memeval.engines.registry import parse_ref
from memeval.errors import UsageError
from memeval.evaluation.columns import jobs_of, outgoing_of
from memeval.evaluation.jobs import CaseJob, Outgoing, planned, record_run
from memeval.evaluation.models import ModelOptions, ModelPlan, paid_so_far, plan_models
from memeval.evaluation.preflight import check_engine
from memeval.evaluation.selection import Case, Selection, chosen
from memeval.llm.setup import budget_micros
from memeval.report.stored import require_run
from memeval.runner import RunOptions
from memeval.runner.host import HostLimits
from memeval.store import CaseKey, RunRecord, Store
from memeval.suites.catalog import Suite
from memeval.suites.haystack import Haystack
from memeval.summary import plural, subset_name


class RunPlan(BaseModel):
    """What every case of an in-process run shares; the cases come as they are read."""

    run_id: str
    label: str
    engine: str
    suite: str
    options: RunOptions
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


def new_run_id() -> str:
    """Sortable by start time, unique without coordination."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def select(suite: Suite, only: list[str], dimensions: list[str]) -> list[Case]:
    """Filter by `--only` (a case id, or its last part) and `--dimension`."""
    return list(chosen((c.case for c in suite.cases), only, dimensions))


class RunRequest(BaseModel):
    """A new run as asked for, its engine already a registry reference."""

    engine: str = "reference"
    suite: str = "all"
    only: list[str] = Field(default_factory=list)
    dimension: list[str] = Field(default_factory=list)
    limit: int | None = None
    """Only the first `limit` cases the selection holds (a slice of a large benchmark)."""
    trials: int | None = None
    keep: bool = False
    label: str | None = None
    models: ModelOptions = Field(default_factory=ModelOptions)
    host: HostLimits | None = None
    haystack: Haystack | None = None


class PlannedRun(BaseModel):
    """A run in the store, and the cases still to send for it: their keys, in plan order, and
    where to read their bodies again (`selection`), which are never all held at once."""

    run_id: str
    label: str
    engine: str
    options: RunOptions
    selection: Selection
    todo: list[CaseKey]
    models: ModelPlan

    def outgoing(self) -> Outgoing:
        return outgoing_of(self.selection, self.todo, [self])

    def jobs(self) -> Iterator[CaseJob]:
        """The cases still to send, read from the suite as they are asked for."""
        return jobs_of(self.selection, self.todo, [self])


def concurrency(workers: int | None) -> int:
    """Local worker processes, or in-process cases at once: one per CPU unless given."""
    if workers is None:
        return os.cpu_count() or 1
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, not {workers}")
    return workers


def plan_new(store: Store, request: RunRequest, console: Console) -> PlannedRun:
    """The engine is checked by the caller, who knows where it will run. The plan is made from
    one pass over the suite that keeps each case's key, kind and dimension, not the case."""
    run_id = new_run_id()
    label = request.label or f"{parse_ref(request.engine).name}-{run_id}"
    models = plan_models(run_id, request.models, console)
    if request.trials is not None and request.trials < 1:
        raise UsageError(f"--trials must be at least 1, not {request.trials}")
    selection = Selection(
        suite=request.suite,
        only=request.only,
        dimension=request.dimension,
        limit=request.limit,
        haystack=request.haystack,
    )
    once = [planned(case, 0) for case in selection.cases()]
    plan = [p.model_copy(update={"trial": t}) for t in range(request.trials or 1) for p in once]
    options = RunOptions(
        keep=request.keep,
        llm=models.llm,
        rates=models.rates,
        host=request.host,
        haystack=request.haystack,
    )
    record = record_run(
        store,
        run_id=run_id,
        label=label,
        engine=request.engine,
        suite=request.suite,
        planned=plan,
        options=options,
        budget_micros=models.budget_micros,
        subset=subset_name(request.only, request.dimension, _cut(request.limit, len(once))),
    )
    # The store gives a taken label the first free suffix: reports never overwrite a run's.
    if request.label and record.label != request.label:
        console.print(
            f"label `{request.label}` is taken: this run is `{record.label}`", highlight=False
        )
    return PlannedRun(
        run_id=run_id,
        label=record.label,
        engine=request.engine,
        options=options,
        selection=selection,
        todo=[p.key for p in plan],
        models=models,
    )


def _cut(limit: int | None, planned: int) -> int | None:
    """The limit, when it left cases out: one the suite did not reach names no subset."""
    return limit if limit is not None and planned >= limit else None


def plan_resume(
    store: Store, run_id: str, budget_usd: float | None, *, check_here: bool, console: Console
) -> PlannedRun:
    """`check_here`: the cases run beside this process (local workers, or in it), so the
    engine's own preflight runs before the run reopens."""
    if check_here:
        check_engine(require_run(store, run_id).engine, remote=False)
    planned = _reopen(store, run_id, console)
    cap = resumed_budget(store, require_run(store, run_id), budget_usd)
    llm = planned.options.llm
    if planned.todo and llm is not None:
        planned.models = ModelPlan(
            llm=llm,
            rates=planned.options.rates,
            budget_micros=cap,
            spent_micros=paid_so_far(store, run_id, llm.budget_scopes),
            raise_cap=budget_usd is not None,
        )
    return planned


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


def _reopen(store: Store, run_id: str, console: Console) -> PlannedRun:
    """The run's cases without a done result, found again in its suite; reopens the run."""
    record = require_run(store, run_id)
    missing = store.missing_cases(run_id)
    options = RunOptions.model_validate(record.options)
    # The variants the run was planned with; no other filter is needed to find a case by id.
    selection = Selection(suite=record.suite_at, haystack=options.haystack)
    gone = selection.absent({p.case_id for p in missing}) if missing else []
    if gone:
        raise UsageError(
            f"run `{run_id}` needs cases its suite `{record.suite}` no longer holds: "
            + ", ".join(gone),
            fix="restore those case files, or start a new run",
        )
    store.reopen_run(run_id)
    console.print(
        f"resuming {run_id}: {len(missing)} of {plural(record.planned_count, 'case')} to run"
    )
    return PlannedRun(
        run_id=run_id,
        label=record.label,
        engine=record.engine,
        options=options,
        selection=selection,
        todo=[p.key for p in missing],
        models=ModelPlan(llm=None, rates=[], budget_micros=None),
    )
