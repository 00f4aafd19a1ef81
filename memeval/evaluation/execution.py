"""Running a planned run's cases to a closed run and its reports, on whichever executor runs
them: this process (`InProcess`, below) or a farm (`memeval_farm.executor.FarmExecutor`).

Whatever stops the run early (Ctrl-C, SIGTERM, a broker that stays away, an engine that goes
down or out of credit), the run is closed as interrupted with what landed, and its reports are
written, so `memeval run --resume` can finish it. That policy lives here once, for every
executor and every caller (the command line, `memeval.evaluate`, the sweep).
"""

from __future__ import annotations

import asyncio
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict
from rich.console import Console

from memeval.engines.base import Engine
from memeval.errors import CreditsExhausted, EngineUnavailable, MemevalError, RefusedStop
from memeval.evaluation.finalize import finalize
from memeval.evaluation.outcome import RunEnd, RunStopped, Stop, credits_out
from memeval.evaluation.outputs import Outputs
from memeval.evaluation.planning import PlannedRun, RunPlan
from memeval.inprocess import run_plan
from memeval.llm.answer import PaidCalls
from memeval.llm.shared import OpenShared
from memeval.results import CaseResult
from memeval.store import RunStatus, Store
from memeval.summary import case_line

Pool = Literal["prefork", "threads"]
"""How a farm's local worker runs cases: processes, or threads in one process."""


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


class Executor(Protocol):
    """Runs a planned run's cases until each has landed in the store, or raises what stopped
    it: `KeyboardInterrupt`, `EngineUnavailable`, `CreditsExhausted`, `RefusedStop` or
    `RunStopped`. Closing the run and writing its reports is `execute`'s job, not the
    executor's."""

    remote: bool
    """Whether the cases run on workers that hold their own keys (a fleet), so this process
    does not check the engine itself."""

    def run(self, store: Store, planned: PlannedRun, how: Execution) -> None: ...


def execute(executor: Executor, store: Store, planned: PlannedRun, how: Execution) -> RunEnd:
    run_id = planned.run_id
    try:
        executor.run(store, planned, how)
    except KeyboardInterrupt:
        return _stopped(store, planned, how, Stop.interrupted)
    except EngineUnavailable as exc:
        fix = f"then `memeval run --resume {run_id}`"
        error = MemevalError(f"the engine is unavailable: {exc}", fix=fix)
        return _stopped(store, planned, how, Stop.engine, error)
    except RunStopped as exc:
        error = MemevalError(
            exc.error.message, fix=f"{exc.error.fix}: `memeval run --resume {run_id}`"
        )
        return _stopped(store, planned, how, exc.stop, error)
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


class InProcess:
    """The debugging path: the same runner in this process's event loop, same store. What the
    farm would share between workers (rate limits, a budget) lives in `shared`: this process's
    memory, or a Redis another process also uses."""

    remote = False

    def __init__(self, shared: OpenShared) -> None:
        self.shared = shared

    def run(self, store: Store, planned: PlannedRun, how: Execution) -> None:
        opener = planned.models.shared_opener(how.console)
        if opener is not None:
            opener(self.shared)
        if not planned.todo:
            return
        plan = RunPlan(
            run_id=planned.run_id,
            label=planned.run_id,
            engine=planned.engine,
            suite="",
            options=planned.options,
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
                planned.selection.find(planned.todo),
                concurrency=how.workers,
                on_result=landed,
                shared=self.shared,
                ledger=PaidCalls(planned.run_id, store.record_paid_call),
                instance=how.engine,
            )
        )
