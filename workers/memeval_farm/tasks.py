"""The tasks: `run_case`, a thin shell around the runner, and the chord callbacks `finish_run`
(a run) and `finish_sweep` (every run of a sweep), which end each chord a run is sent in.

`run_case` never raises for a case: a memory failure is a scored result, and anything else
(an engine crash, a timeout, an engine still unreachable after its retries) is stored as an
error result. It stores first and then returns a fixed reference, so a redelivered message
overwrites one row instead of adding one, and every header task succeeds: the chord always
reaches its callback.

They are defined here once, at module level (`shared_task`), so every app `make_app` builds
has them; what they read of a farm's settings comes from the app that runs them (`farm_of`),
and their retries are set where the app is configured (`memeval_farm.config`).
"""

from __future__ import annotations

import contextlib
import logging
import traceback
from datetime import UTC, datetime
from typing import Any, cast
from weakref import WeakKeyDictionary

from celery import Celery, Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy.exc import OperationalError

from memeval.evaluation.finalize import all_landed, close, finalize, summary
from memeval.evaluation.jobs import CaseJob
from memeval.evaluation.outcome import NOT_RUN
from memeval.llm.answer import PaidCalls
from memeval.results import CaseResult, CaseStatus
from memeval.runner import refusals, run_case
from memeval.runner.context import RunOptions
from memeval.runner.failures import Action, Place, judge
from memeval.secrets import redact
from memeval.store import RunStatus
from memeval.suites.loader import CASE_ADAPTER
from memeval_farm import metrics
from memeval_farm.attempts import next_attempt
from memeval_farm.fence import SUPERSEDED, Fence
from memeval_farm.halt import Halts
from memeval_farm.names import FINISH_RUN, FINISH_SWEEP, RUN_CASE
from memeval_farm.redis_state import answerer_for, limited_engine
from memeval_farm.runtime import RUNTIME
from memeval_farm.settings import FarmSettings
from memeval_farm.shield import REDIS_FAULTS, shield

log = logging.getLogger(__name__)


class Farm:
    """What one app's tasks share: its settings, and the run flags and dispatch fence in its
    Redis's key space. Set by `memeval_farm.config.make_app`; one process may hold several
    apps (a test, a benchmark), each with its own."""

    def __init__(self, settings: FarmSettings) -> None:
        self.settings = settings
        self.halts = Halts(settings.key_prefix)
        self.fence = Fence(settings.key_prefix)


_FARMS: WeakKeyDictionary[Celery, Farm] = WeakKeyDictionary()


def configure(app: Celery, settings: FarmSettings) -> None:
    _FARMS[app] = Farm(settings)


def farm_of(app: Celery) -> Farm:
    try:
        return _FARMS[app]
    except KeyError:
        raise RuntimeError(
            f"Celery app {app.main!r} runs memeval's tasks but was not built by "
            "memeval_farm.config.make_app"
        ) from None


def superseded(app: Celery, run_id: str, epoch: str | None, what: str) -> bool:
    if farm_of(app).fence.current(getattr(app.backend, "client", None), run_id, epoch):
        return False
    log.info("run %s: %s %s", run_id, what, SUPERSEDED)
    return True


@shared_task(name=RUN_CASE, bind=True, acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
def run_case_task(
    task: Task,
    run_id: str,
    case_id: str,
    trial: int,
    *,
    engine: str,
    case: str,
    options: dict[str, Any],
    epoch: str | None = None,
) -> dict[str, Any]:
    """Retries (`max_retries`) and time limits are the app's settings (`make_app`); `case`
    is the case's JSON (`CaseJob.body`)."""
    app, settings = task.app, farm_of(task.app).settings
    job = CaseJob(
        run_id=run_id,
        engine=engine,
        case=CASE_ADAPTER.validate_json(case),
        trial=trial,
        options=RunOptions.model_validate(options),
    )
    status = RUNTIME.run_status(run_id)
    if status is RunStatus.interrupted:
        return job.reference()  # Ctrl-C'd: a worker that missed the revoke skips it too
    if superseded(app, run_id, epoch, f"case {case_id}#{trial} not run:"):
        return job.reference()
    if status is None:  # the run was written to another store than this worker's
        log.error(
            "run %s is not in this worker's results store (%s): MEMEVAL_DATABASE_URL "
            "differs from the dispatcher's; handing case %s back",
            run_id,
            RUNTIME.store.url.render_as_string(hide_password=True),
            case_id,
        )
        raise retry(task, settings)
    metrics.case_started(run_id, engine)
    result = execute(task, job, settings, farm_of(app).halts)
    if superseded(app, run_id, epoch, f"case {case_id}#{trial} not stored:"):
        return job.reference()
    if RUNTIME.run_status(run_id) is not RunStatus.running:  # a closed run's rows stay
        log.info("run %s is closed: case %s#%d not stored", run_id, case_id, trial)
        return job.reference()
    try:
        RUNTIME.store.upsert_case_result(result)
    except OperationalError as exc:  # the store is infrastructure too: retry the case
        raise retry(task, settings, exc) from exc
    metrics.case_finished(result, job.options.llm.model if job.options.llm else None)
    began = farm_of(app).fence.began(getattr(app.backend, "client", None), run_id)
    if began is not None and all_landed(RUNTIME.store, run_id, began):
        close(RUNTIME.store, run_id)  # the last case closes its run, chord or none
    return job.reference()


@shared_task(name=FINISH_RUN, bind=True, acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
def finish_run_task(
    task: Task, _refs: list[dict[str, Any]], run_id: str, epoch: str | None = None
) -> dict[str, object]:
    """An earlier dispatch's chord leaves the run to the latest one's."""
    return _finish(task.app, run_id, epoch)


@shared_task(name=FINISH_SWEEP, bind=True, acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
def finish_sweep_task(
    task: Task,
    _refs: list[dict[str, Any]],
    run_ids: list[str],
    epochs: dict[str, str] | None = None,
) -> list[dict[str, object]]:
    """A sweep's runs share one chord, so that one budget and one queue cover them all;
    each run is still folded and closed on its own, as idempotently as `finish_run`."""
    return [_finish(task.app, run_id, (epochs or {}).get(run_id)) for run_id in run_ids]


def _finish(app: Celery, run_id: str, epoch: str | None) -> dict[str, object]:
    if superseded(app, run_id, epoch, "the closing step of an earlier dispatch skipped:"):
        return {"run_id": run_id, "superseded": True}
    # A run goes out as several chords (`memeval_farm.dispatch.Outbox`): a chord that ends
    # while the run still waits for cases costs two counts, not a fold of every result.
    began = farm_of(app).fence.began(getattr(app.backend, "client", None), run_id)
    if began is not None and not all_landed(RUNTIME.store, run_id, began):
        return {"run_id": run_id, "pending": True}
    return summary(finalize(RUNTIME.store, run_id))


def retry(task: Task, settings: FarmSettings, exc: BaseException | None = None) -> Exception:
    """Celery republishes a retried task without its display strings, so Flower would fall back
    to the raw arguments: the label gone, the case body shown and nothing masked."""
    return cast(  # celery ships no type hints
        Exception,
        task.retry(
            exc=exc,
            countdown=backoff(task, settings),
            argsrepr=task.request.argsrepr,
            kwargsrepr=task.request.kwargsrepr,
        ),
    )


def execute(task: Task, job: CaseJob, settings: FarmSettings, halts: Halts) -> CaseResult:
    """Run the case; an unreachable engine or farm Redis retries it, spent engine credits halt
    the run (`memeval_farm.halt`), and the rest becomes the case's result."""
    started = datetime.now(UTC)
    client = getattr(task.app.backend, "client", None)  # the farm's Redis, when there is one
    halted = halts.reason(client, job.run_id)
    if halted is not None and halted.startswith(refusals.STOPPED):
        return job.failed(f"not run: {halted}", started)
    if halted is not None:
        return job.failed(f"{NOT_RUN}: {halted}", started, CaseStatus.skipped_credits)
    key = f"{job.run_id}:{job.case.id}#{job.trial}"
    attempt = next_attempt(client, settings.key_prefix, key, task.request.retries)
    try:
        result = RUNTIME.run(
            case_with_limits(job, str(task.app.conf.result_backend), attempt),
            timeout=settings.case_timeout,
        )
        with contextlib.suppress(*REDIS_FAULTS):
            alike = halts.land(
                client, job.run_id, refusals.signature(result), job.options.refused_stop
            )
            if alike is not None:
                stop = refusals.stop_error(result.engine, alike, result.error or "")
                halts.raise_flag(client, job.run_id, stop.message)
        return result
    except Exception as exc:  # what it means is the core's one policy (`runner.failures`)
        verdict = judge(exc, on_farm(task, settings))
        if verdict.action is Action.retry:
            raise retry(task, settings, exc) from exc
        if verdict.crashed:
            log.error(
                "case %s#%d of run %s raised:\n%s",
                job.case.id,
                job.trial,
                job.run_id,
                redact(traceback.format_exc()),
            )
        if verdict.action is Action.halt:  # the account is spent: every worker skips the rest
            with contextlib.suppress(*REDIS_FAULTS):
                halts.raise_flag(client, job.run_id, verdict.reason)
            return job.failed(verdict.reason, started, verdict.status)
        return job.failed(verdict.reason, started, verdict.status, attempt=attempt)


def on_farm(task: Task, settings: FarmSettings) -> Place:
    """A worker's place: retries left, the farm's Redis as infrastructure, Celery's soft time
    limit as a timeout."""
    return Place(
        farm=True,
        tries=task.request.retries,
        retries=settings.retries,
        infrastructure=REDIS_FAULTS,
        timeouts=(SoftTimeLimitExceeded,),
        case_timeout=settings.case_timeout,
    )


async def case_with_limits(job: CaseJob, redis_url: str, attempt: int = 0) -> CaseResult:
    """The case behind the global rate limiter and with the run's answering model, both kept
    in the farm's Redis so every worker on every machine shares them. `attempt` counts the
    case's executions (`memeval_farm.attempts`), so each runs on a fresh tenant."""
    async with (
        limited_engine(RUNTIME.engine(job.engine), job.options.rates, redis_url) as limited,
        answerer_for(
            job.options.llm,
            redis_url=redis_url,
            ledger=PaidCalls(job.run_id, RUNTIME.store.record_paid_call),
        ) as answerer,
    ):
        return await run_case(
            job.case,
            shield(limited),
            run_id=job.run_id,
            trial=job.trial,
            attempt=attempt,
            options=job.options,
            answerer=answerer,
        )


def backoff(task: Task, settings: FarmSettings) -> float:
    retries: int = task.request.retries  # celery ships no type hints
    return min(settings.retry_backoff * 2.0**retries, settings.retry_backoff_max)
