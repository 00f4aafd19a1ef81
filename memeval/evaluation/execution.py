"""Running a planned run's cases, in this process or on a farm, to a closed run and its reports.

Whatever stops the run early (Ctrl-C, SIGTERM, a broker that stays away, an engine that goes
down or out of credit), the run is closed as interrupted with what landed, and its reports are
written, so `memeval run --resume` can finish it.
"""

from __future__ import annotations

import asyncio

from celery import Celery
from pydantic import BaseModel, ConfigDict
from rich.console import Console

from memeval.engines.base import Engine
from memeval.errors import (
    BrokerGone,
    CreditsExhausted,
    EngineUnavailable,
    MemevalError,
    RefusedStop,
)
from memeval.evaluation.models import shared_in_process
from memeval.evaluation.outcome import RunEnd, Stop, credits_out
from memeval.evaluation.outputs import Outputs
from memeval.evaluation.planning import PlannedRun
from memeval.inprocess import run_plan
from memeval.llm.answer import PaidCalls
from memeval.llm.shared import OpenShared
from memeval.plan import CaseRef, RunPlan
from memeval.results import CaseResult
from memeval.store import RunStatus, Store
from memeval.summary import case_line
from memeval_farm.aggregate import finalize
from memeval_farm.dispatch import dispatch
from memeval_farm.embedded import Pool
from memeval_farm.farm import connect, preflight_fleet, run_on_farm
from memeval_farm.settings import FarmSettings


class Farm(BaseModel):
    """Where the cases run: in this process, on an embedded farm (no `shared` app), or on the
    fleet behind `shared`'s broker."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    settings: FarmSettings
    in_process: bool = False
    shared: Celery | None = None

    @classmethod
    def connected(cls, settings: FarmSettings, *, in_process: bool) -> Farm:
        """The fleet's broker is checked reachable here, before the run exists."""
        return cls(
            settings=settings,
            in_process=in_process,
            shared=None if in_process else connect(settings),
        )


class Execution(BaseModel):
    """How to run the cases: local concurrency and pool, progress lines, where reports go."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    workers: int
    pool: Pool = "prefork"
    verbose: bool = False
    outputs: Outputs | None = None
    console: Console
    engine: Engine | None = None
    """An engine object to run in this process instead of building one from the reference."""


def dispatch_detached(
    shared: Celery, settings: FarmSettings, store: Store, planned: PlannedRun, console: Console
) -> None:
    """Send the cases to the fleet behind `shared` and return; its workers finish the run."""
    opener = planned.models.opener(console)
    if opener is not None:
        opener(str(shared.conf.result_backend))
    if planned.jobs:
        preflight_fleet(shared, settings, store, planned.jobs, console)
        dispatch(shared, planned.run_id, planned.jobs, prefix=settings.key_prefix)


def execute(farm: Farm, store: Store, planned: PlannedRun, how: Execution) -> RunEnd:
    run_id = planned.run_id
    try:
        _run(farm, store, planned, how)
    except KeyboardInterrupt:
        return _stopped(store, planned, how, Stop.interrupted)
    except EngineUnavailable as exc:
        fix = f"then `memeval run --resume {run_id}`"
        error = MemevalError(f"the engine is unavailable: {exc}", fix=fix)
        return _stopped(store, planned, how, Stop.engine, error)
    except BrokerGone as exc:
        error = MemevalError(exc.message, fix=f"{exc.fix}: `memeval run --resume {run_id}`")
        return _stopped(store, planned, how, Stop.broker, error)
    except CreditsExhausted as exc:  # only in-process runs see it: workers store it as results
        return _stopped(store, planned, how, Stop.credits, credits_out(str(exc), run_id))
    except RefusedStop as exc:  # in process; the farm's workers flag it (memeval_farm.halt)
        return _stopped(store, planned, how, Stop.refused, exc)
    report = finalize(store, run_id)
    return _written(store, planned, how, RunEnd(report=report))


def _stopped(
    store: Store,
    planned: PlannedRun,
    how: Execution,
    stop: Stop,
    error: MemevalError | None = None,
) -> RunEnd:
    report = finalize(store, planned.run_id, RunStatus.interrupted)
    return _written(store, planned, how, RunEnd(report=report, stop=stop, error=error))


def _written(store: Store, planned: PlannedRun, how: Execution, end: RunEnd) -> RunEnd:
    """The run's reports written. Ctrl-C while they are (a large suite's take seconds) leaves
    the run `interrupted`, never `finished` without its reports: each file is whole or absent,
    and `memeval run --resume` writes them all."""
    if how.outputs is None:
        return end
    try:
        how.outputs.write(end.report, planned.label, how.console)
    except KeyboardInterrupt:
        store.finish_run(planned.run_id, RunStatus.interrupted)
        return RunEnd(report=end.report, stop=Stop.interrupted, error=end.error, unwritten=True)
    return end


def _run(farm: Farm, store: Store, planned: PlannedRun, how: Execution) -> None:
    if not farm.in_process:
        run_on_farm(
            farm.settings,
            farm.shared,
            store,
            planned.run_id,
            planned.jobs,
            workers=how.workers,
            pool=how.pool,
            console=how.console,
            verbose=how.verbose,
            before_dispatch=planned.models.opener(how.console),
        )
        return
    shared = shared_in_process()
    opener = planned.models.shared_opener(how.console)
    if opener is not None:
        opener(shared)
    _in_process(store, planned, how, shared)


def _in_process(store: Store, planned: PlannedRun, how: Execution, shared: OpenShared) -> None:
    """The debugging path: the same runner in this process's event loop, same store."""
    jobs = planned.jobs
    if not jobs:
        return
    plan = RunPlan(
        run_id=planned.run_id,
        label=planned.run_id,
        engine=jobs[0].engine,
        suite="",
        options=jobs[0].options,
        cases=[CaseRef(case_id=job.case.id, trial=job.trial) for job in jobs],
    )

    def landed(result: CaseResult) -> None:
        store.upsert_case_result(result)
        if how.verbose:
            where = f"{result.case_id}#{result.trial}"
            line = case_line(result.status, result.score, where, result.error)
            how.console.print(line, highlight=False)

    asyncio.run(
        run_plan(
            plan,
            {job.case.id: job.case for job in jobs},
            concurrency=how.workers,
            on_result=landed,
            shared=shared,
            ledger=PaidCalls(planned.run_id, store.record_paid_call),
            instance=how.engine,
        )
    )
