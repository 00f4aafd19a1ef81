"""Closing a run: the last case to land closes it (`all_landed`, asked after every case), and
the chord callback and the dispatcher may both close it after that, with the same report."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from memeval.evaluation.finalize import all_landed, close, finalize
from memeval.results import CaseStatus
from memeval.store import PlannedCase, RunStatus, Store
from tests.store.conftest import make_result


def test_a_run_has_all_landed_once_each_case_is_done_or_stored_since_its_dispatch(store: Store):
    planned = [PlannedCase(case_id=f"c{n}", kind="fixture") for n in range(3)]
    run_id = store.create_run(label="l", engine="naive", suite="s", planned=planned).id
    store.upsert_case_result(make_result(run_id, "c0", status=CaseStatus.error, score=None))
    time.sleep(0.01)  # the dispatch after it: its rows' times are apart on any clock
    since = datetime.now(UTC)
    time.sleep(0.01)
    assert not all_landed(store, run_id, since)
    store.upsert_case_result(make_result(run_id, "c1"))
    store.upsert_case_result(make_result(run_id, "c2"))
    assert not all_landed(store, run_id, since)  # c0's error is an earlier session's
    assert all_landed(store, run_id, datetime.now(UTC) - timedelta(minutes=1))
    store.upsert_case_result(make_result(run_id, "c0", status=CaseStatus.error, score=None))
    assert all_landed(store, run_id, since)  # landed again, in this session
    assert not all_landed(store, "no-such-run", since)


def test_closing_twice_gives_the_same_report(store: Store):
    """The chord callback and the dispatcher may both close a run: the second finds it closed
    and folds the same report."""
    planned = [PlannedCase(case_id=f"c{n}", kind="fixture") for n in range(2)]
    run_id = store.create_run(label="l", engine="naive", suite="s", planned=planned).id
    store.upsert_case_result(make_result(run_id, "c0"))
    assert finalize(store, run_id).finished_at is None  # c1 missing: left running
    store.upsert_case_result(make_result(run_id, "c1"))
    first = finalize(store, run_id)
    second = finalize(store, run_id, RunStatus.interrupted)
    assert store.run_status(run_id) is RunStatus.finished
    assert first.finished_at is not None and second == first


def test_the_last_case_closes_its_run_once_and_never_reopens_an_interrupted_one(store: Store):
    planned = [PlannedCase(case_id="c0", kind="fixture")]
    run_id = store.create_run(label="l", engine="naive", suite="s", planned=planned).id
    store.upsert_case_result(make_result(run_id, "c0"))
    close(store, run_id)
    closed = store.get_run(run_id)
    assert closed is not None and closed.status is RunStatus.finished
    close(store, run_id)  # the chord callback, or a redelivered last case
    assert store.get_run(run_id) == closed
    assert finalize(store, run_id).finished_at == closed.finished_at
    store.finish_run(run_id, RunStatus.interrupted)  # Ctrl-C'd meanwhile
    close(store, run_id)
    assert store.run_status(run_id) is RunStatus.interrupted
