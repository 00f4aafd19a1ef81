"""Sends a run's cases (or a sweep's, across its runs) as they are read, a window of them in
flight at a time, each few as a chord; waits for them to land, and revokes what is left on
Ctrl-C.

Works the same on the embedded broker and on a fleet: only the app and the watchdog's view of
the workers differ.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable

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
MB = 1024 * 1024
CHORD_BYTES = 16 * MB
"""The case bodies one chord carries at most, as JSON (a chord of one case may exceed it)."""


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


class Outbox:
    """Sends a run's cases (or a sweep's, across its runs) as they are read, in chords of a
    few cases each, every chord closed by `finish_run` for a run id or `finish_sweep` for a
    sweep's run ids. The callback folds and closes a run once its cases have all landed
    (`memeval_farm.tasks`), so whichever chord ends last closes it, and the others cost a count.

    Each run gets a new epoch first (`memeval_farm.fence`, under the farm's key `prefix`), and
    every message carries it, so what an earlier dispatch of the run left queued cannot run.

    The queue is first in, first out and a worker process holds one case at a time, so the
    order given is the order cases start: a sweep's interleaving survives dispatch. Task ids are
    fresh on every dispatch, so a case revoked by a Ctrl-C can be sent again by `--resume`. Case
    results are ignored by Celery (the chord still counts them): progress is read from the
    store, so this process need not subscribe to one result per case.
    """

    def __init__(
        self, app: Celery, run_id: str | list[str], jobs: Iterable[CaseJob], *, prefix: str = ""
    ) -> None:
        fence, client = Fence(prefix), getattr(app.backend, "client", None)
        run_ids = [run_id] if isinstance(run_id, str) else run_id
        self.app = app
        self.run_id = run_id
        self.epochs = {each: fence.advance(client, each) for each in run_ids}
        self.task_ids: dict[str, JobKey] = {}
        self.sizes: dict[JobKey, int] = {}
        """Each sent case's body, as JSON bytes: what the broker holds until it is taken."""
        self._jobs = iter(jobs)
        self._read: list[CaseJob] = []  # read but not yet sent: kept when a send fails
        self._bytes = 0  # their bodies' JSON size
        self._more = True

    @property
    def more(self) -> bool:
        """Whether any case is left to send."""
        if self._more and not self._read:
            self._fill(1)
        return bool(self._read)

    def _fill(self, count: int) -> None:
        """Read up to `count` cases, fewer once their bodies reach `CHORD_BYTES`: a chord is
        held whole while it is built and sent, and a LongMemEval-M instance is 6 MB of JSON."""
        while self._more and len(self._read) < count and self._bytes < CHORD_BYTES:
            job = next(self._jobs, None)
            if job is None:
                self._more = False
            else:
                self._read.append(job)
                self.sizes[job.key] = len(job.body)
                self._bytes += self.sizes[job.key]

    def send(self, count: int) -> list[JobKey]:
        """Up to `count` more cases as one chord; the keys sent. A broker fault leaves the
        cases read to be sent by the next call."""
        self._fill(count)
        if not self._read:
            return []
        batch = {uuid(): job for job in self._read}
        header = [
            self.app.signature(
                RUN_CASE, task_id=i, ignore_result=True, **job.message(self.epochs[job.run_id])
            )
            for i, job in batch.items()
        ]
        finish = (
            self.app.signature(
                FINISH_RUN, args=(self.run_id,), kwargs={"epoch": self.epochs[self.run_id]}
            )
            if isinstance(self.run_id, str)
            else self.app.signature(
                FINISH_SWEEP, args=(self.run_id,), kwargs={"epochs": self.epochs}
            )
        )
        chord(header, finish).apply_async()
        self._read, self._bytes = [], 0
        # The group still subscribes this process to each case's result, which never comes:
        # unsubscribe now, while the broker is surely up, not at exit when it may be gone.
        for task_id in batch:
            self.app.backend.result_consumer.cancel_for(task_id)
        keys = {i: job.key for i, job in batch.items()}
        self.task_ids.update(keys)
        return list(keys.values())


def dispatch(
    app: Celery,
    run_id: str | list[str],
    jobs: Iterable[CaseJob],
    *,
    prefix: str = "",
    batch: int | None = None,
) -> Outbox:
    """Every case now, in chords of `batch` (all in one when None), for a dispatcher that
    does not wait (`--detach`); returns the outbox, which holds the task ids and each case's
    size."""
    outbox = Outbox(app, run_id, jobs, prefix=prefix)
    while outbox.more:
        outbox.send(batch or sys.maxsize)
    return outbox


def fleet_window(configured: int, slots: int) -> int:
    """Cases kept queued or running: `MEMEVAL_DISPATCH_WINDOW`, raised to twice the cases the
    workers run at once (`slots`) when that is more. A window no larger than the fleet leaves
    a freed worker waiting for the dispatcher to notice and send more: at 128 slots and the
    default window of 128, a slot stood idle 0.55 s between 3 s cases. The bytes in flight
    stay capped by `MEMEVAL_DISPATCH_WINDOW_MB` whatever the count."""
    return max(configured, 2 * slots)


def chord_size(window: int) -> int:
    """Cases a chord carries: a quarter of the window, so a new chord goes out while three
    quarters of the window are still queued or running and the workers never wait for one."""
    return max(1, -(-window // 4))


def wait(
    landings: Landings,
    watchdog: Watchdog,
    poll: float,
    on_tick: Callable[[list[tuple[JobKey, CaseState]]], None],
    top_up: Callable[[], None] = lambda: None,
) -> set[JobKey]:
    """Block until every case has been sent (`top_up` sends what the window has room for) and
    has landed; return the cases the watchdog declared lost."""
    top_up()
    while landings.waiting or landings.unsent:
        time.sleep(poll)
        new = landings.poll()
        on_tick(new)
        lost = watchdog.lost(landings.waiting, progressed=bool(new))
        if lost:
            return lost
        top_up()
    return set()


def revoke(app: Celery, task_ids: dict[str, JobKey], pending: set[JobKey]) -> None:
    """Tell every worker to drop the cases not yet landed; running ones are left to finish."""
    ids = [task_id for task_id, key in task_ids.items() if key in pending]
    if ids:
        app.control.revoke(ids)
