"""Sends a run's cases (or a sweep's, across its runs) as one chord, waits for them to land, and
revokes what is left on Ctrl-C.

Works the same on the embedded broker and on a fleet: only the app and the watchdog's view of
the workers differ.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from celery import Celery, chord, uuid
from kombu.exceptions import OperationalError

from memeval.errors import UsageError
from memeval.evaluation.jobs import CaseJob, JobKey
from memeval_farm.fence import Fence
from memeval_farm.names import FINISH_RUN, FINISH_SWEEP, RUN_CASE
from memeval_farm.progress import CaseState, Landings
from memeval_farm.settings import safe_url
from memeval_farm.watchdog import Watchdog

CONNECT_TIMEOUT = 5.0


def check_broker(app: Celery) -> None:
    """Fail before the run exists if the broker or the result backend cannot be reached."""
    broker = app.conf.broker_url
    try:
        with app.connection_for_write(connect_timeout=CONNECT_TIMEOUT) as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, interval_step=0)
    except (OperationalError, OSError) as exc:
        raise UsageError(
            f"cannot reach the broker at {safe_url(broker)}: {exc}",
            fix="start it, or correct MEMEVAL_BROKER_URL (unset it to run on this machine)",
        ) from exc
    ping = getattr(getattr(app.backend, "client", None), "ping", None)
    if ping is None:
        return
    try:
        ping()
    except Exception as exc:
        raise UsageError(
            f"cannot reach the result backend at {safe_url(app.conf.result_backend)}: {exc}",
            fix="start it, or correct MEMEVAL_RESULT_BACKEND",
        ) from exc


def dispatch(
    app: Celery, run_id: str | list[str], jobs: list[CaseJob], *, prefix: str = ""
) -> dict[str, JobKey]:
    """One chord: a `run_case` per job, in the order given, then `finish_run` for a run id or
    `finish_sweep` for a sweep's run ids; returns the task ids.

    Each run gets a new epoch first (`memeval_farm.fence`, under the farm's key `prefix`), and
    every message carries it, so what an earlier dispatch of the run left queued cannot run.

    The queue is first in, first out and a worker process holds one case at a time, so the
    order given is the order cases start: a sweep's interleaving survives dispatch. Task ids are
    fresh on every dispatch, so a case revoked by a Ctrl-C can be sent again by `--resume`. Case
    results are ignored by Celery (the chord still counts them): progress is read from the
    store, so this process need not subscribe to one result per case.
    """
    fence, client = Fence(prefix), getattr(app.backend, "client", None)
    run_ids = [run_id] if isinstance(run_id, str) else run_id
    epochs = {each: fence.advance(client, each) for each in run_ids}
    ids = {uuid(): job.model_copy(update={"epoch": epochs[job.run_id]}) for job in jobs}
    header = [
        app.signature(RUN_CASE, task_id=i, ignore_result=True, **job.message())
        for i, job in ids.items()
    ]
    finish = (
        app.signature(FINISH_RUN, args=(run_id,), kwargs={"epoch": epochs[run_id]})
        if isinstance(run_id, str)
        else app.signature(FINISH_SWEEP, args=(run_id,), kwargs={"epochs": epochs})
    )
    chord(header, finish).apply_async()
    # The group still subscribes this process to each case's result, which never comes:
    # unsubscribe now, while the broker is surely up, not at exit when it may be gone.
    for task_id in ids:
        app.backend.result_consumer.cancel_for(task_id)
    return {i: job.key for i, job in ids.items()}


def wait(
    landings: Landings,
    watchdog: Watchdog,
    poll: float,
    on_tick: Callable[[list[tuple[JobKey, CaseState]]], None],
) -> set[JobKey]:
    """Block until every case has landed; return the cases the watchdog declared lost."""
    while landings.waiting:
        time.sleep(poll)
        new = landings.poll()
        on_tick(new)
        lost = watchdog.lost(landings.waiting, progressed=bool(new))
        if lost:
            return lost
    return set()


def revoke(app: Celery, task_ids: dict[str, JobKey], pending: set[JobKey]) -> None:
    """Tell every worker to drop the cases not yet landed; running ones are left to finish."""
    ids = [task_id for task_id, key in task_ids.items() if key in pending]
    if ids:
        app.control.revoke(ids)
