"""Folds a run from the store into its report and closes it: the chord callback's whole job
(its last case only closes it: `close`).

The store is the source of truth, never the chord's arguments: a redelivered task may count
twice in Celery's chord state, a lost one never, and a resumed run spans several chords. So
the fold reads every case result back, and closing is idempotent: it may run twice (callback
and dispatcher, or a redelivered callback) and give the same answer.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, func, or_, select

from memeval.report.stored import fold, require_run
from memeval.results import CaseStatus, RunReport
from memeval.store import RunStatus, Store
from memeval.store.tables import CaseRow, RunRow


def finalize(store: Store, run_id: str, status: RunStatus = RunStatus.finished) -> RunReport:
    """Close a running run: `finished` once every planned case has a result, or `interrupted`
    whatever it holds. A run that is not running, or still misses cases, is left as it is."""
    record = require_run(store, run_id)
    report = fold(store, record)
    complete = not report.missing
    if record.status is RunStatus.running and (complete or status is RunStatus.interrupted):
        record = store.finish_run(run_id, status)
        report.finished_at = record.finished_at
    return report


def close(store: Store, run_id: str) -> None:
    """Close a running run as finished, without folding it: what its last case does once
    `all_landed` says so. That case has no use for the report, and folding every result there
    held the run open, and the chord callback back, for as long as a fold takes; the callback
    (or the dispatcher) folds it, and either may close it too, to the same end."""
    if store.run_status(run_id) is RunStatus.running:
        store.finish_run(run_id)


def all_landed(store: Store, run_id: str, since: datetime) -> bool:
    """Whether every planned case of the run is done, or has landed since its latest dispatch
    began (`since`): one statement, cheap enough to ask after every case, so the run is closed
    by its last case whatever became of its chord (a Redis restored from its append-only file
    can lose the chord's count, and then its callback). An error or lost row an earlier
    session left is not a landing of this one: the resumed case is still on its way. (Two
    queries through an ORM session cost each case 50 ms of a 16-thread worker's time.)"""
    with store.engine.connect() as connection:
        return bool(connection.execute(_ALL_LANDED, {"run_id": run_id, "since": since}).scalar())


_RUNS, _CASES = RunRow.__table__, CaseRow.__table__  # type: ignore[attr-defined]
_LANDED = (
    select(func.count())
    .select_from(_CASES)
    .where(
        _CASES.c.run_id == _RUNS.c.id,
        or_(_CASES.c.status == CaseStatus.done.value, _CASES.c.updated_at >= bindparam("since")),
    )
    .scalar_subquery()
)
_ALL_LANDED = select(_RUNS.c.planned_count <= _LANDED).where(_RUNS.c.id == bindparam("run_id"))


def summary(report: RunReport) -> dict[str, object]:
    """The chord's return value: small, and derived from the store alone."""
    counts: dict[str, int] = {}
    for case in report.cases:
        counts[case.status.value] = counts.get(case.status.value, 0) + 1
    return {
        "run_id": report.run_id,
        "composite": report.composite,
        "dimensions": report.dimensions,
        "counts": counts,
        "missing": len(report.missing),
    }
