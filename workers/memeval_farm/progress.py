"""What a waiting `memeval run` or `memeval sweep` sees: cases landing in the store, and cases
running now.

Landing is read from the store, the source of truth: a case has landed once its row differs
from the one it had when the run was dispatched, which also covers `--resume`, where the cases
sent again already hold an error or lost row. Running is read from Celery's task events, which
are display only: a missed event can skew the count, never the result.
"""

from __future__ import annotations

import threading
from collections import Counter
from datetime import datetime
from typing import Any, NamedTuple

from celery import Celery
from sqlalchemy import select
from sqlmodel import Session, col

from memeval.evaluation.jobs import JobKey
from memeval.results import CaseStatus
from memeval.store import CaseKey, Store
from memeval.store.tables import CaseRow

_ENDED = ("task-succeeded", "task-failed", "task-retried", "task-revoked", "task-rejected")


class CaseState(NamedTuple):
    status: CaseStatus
    score: float | None
    updated_at: datetime
    error: str | None = None


def case_states(store: Store, run_ids: list[str]) -> dict[JobKey, CaseState]:
    """Each case row's status and version, without loading the result payloads; one query
    however many runs a sweep holds."""
    with Session(store.engine) as session:
        rows = session.execute(
            select(
                col(CaseRow.run_id),
                col(CaseRow.case_id),
                col(CaseRow.trial),
                col(CaseRow.status),
                col(CaseRow.score),
                col(CaseRow.updated_at),
                col(CaseRow.error),
            ).where(col(CaseRow.run_id).in_(run_ids))
        )
        return {
            JobKey(run_id, CaseKey(case_id, trial)): CaseState(
                CaseStatus(status), score, updated, error
            )
            for run_id, case_id, trial, status, score, updated, error in rows
        }


class Landings:
    """Tracks the cases of one run, or of every run of a sweep, from when each is sent until it
    has a new row in the store. All are known from the start (`unsent`); only those sent are
    `waiting`, so the watchdog never looks for a case that was not sent yet."""

    def __init__(self, store: Store, keys: list[JobKey]) -> None:
        self.store = store
        self.run_ids = sorted({key.run_id for key in keys})
        self.unsent = set(keys)
        self.waiting: set[JobKey] = set()
        self.total = len(keys)
        self.planned = Counter(key.run_id for key in keys)
        before = case_states(store, self.run_ids)
        self._before = {key: before.get(key) for key in keys}
        self.landed: dict[JobKey, CaseState] = {}

    def sent(self, keys: list[JobKey]) -> None:
        self.unsent.difference_update(keys)
        self.waiting.update(keys)

    def poll(self) -> list[tuple[JobKey, CaseState]]:
        """The cases that landed since the last poll."""
        now = case_states(self.store, self.run_ids)
        new = [
            (key, now[key])
            for key in sorted(self.waiting)
            if key in now and now[key] != self._before[key]
        ]
        for key, state in new:
            self.waiting.discard(key)
            self.landed[key] = state
        return new

    @property
    def failed(self) -> int:
        return sum(state.status is not CaseStatus.done for state in self.landed.values())


class Activity(threading.Thread):
    """Counts the run's tasks a worker has started and not ended, from task events."""

    def __init__(self, app: Celery, task_ids: set[str]) -> None:
        super().__init__(name="memeval-events", daemon=True)
        self.app = app
        self.task_ids = task_ids
        self._running: set[str] = set()
        self._lock = threading.Lock()
        self._receiver: Any = None

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._running)

    def _on_event(self, event: dict[str, Any]) -> None:
        uuid = event.get("uuid")
        if uuid not in self.task_ids:
            return
        with self._lock:
            if event["type"] == "task-started":
                self._running.add(uuid)
            elif event["type"] in _ENDED:
                self._running.discard(uuid)

    def run(self) -> None:
        try:
            with self.app.connection_for_read() as connection:
                self._receiver = self.app.events.Receiver(
                    connection, handlers={"*": self._on_event}
                )
                for _ in self._receiver.consume(limit=None, timeout=None, wakeup=False):
                    pass
        except Exception:  # display only: losing the event stream must not stop the run
            return

    def stop(self) -> None:
        if self._receiver is not None:
            self._receiver.should_stop = True
