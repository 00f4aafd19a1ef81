from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from memeval.errors import UnknownRun
from memeval.results import CaseStatus, QueryLog, Timing
from memeval.store import CaseKey, PlannedCase, Store

PLAN = [
    PlannedCase(case_id="a", kind="fixture", dimension="temporal"),
    PlannedCase(case_id="b", trial=0, kind="scenario"),
    PlannedCase(case_id="b", trial=1, kind="scenario"),
    PlannedCase(case_id="c", kind="fixture", dimension="conflict"),
]


@pytest.fixture
def run_id(store: Store) -> str:
    return store.create_run(run_id="run-1", label="t", engine="naive", suite="all", planned=PLAN).id


def _count(store: Store, table: str) -> int:
    with store.engine.connect() as conn:
        return conn.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one()


def test_round_trip_keeps_every_field(store: Store, run_id: str, result_factory) -> None:
    start = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    result = result_factory(run_id, "a").model_copy(
        update={
            "queries": [QueryLog(query=0, text="when?", as_of=start, answer="May", hits=["x"])],
            "timings": [Timing(step="write", call="store", ms=12.5)],
            "engine_usd_micros": 42,
            "started_at": start,
            "finished_at": start + timedelta(seconds=2),
        }
    )
    assert store.upsert_case_result(result) is True
    assert store.case_results(run_id) == [result]
    with store.engine.connect() as conn:
        row = conn.execute(text("SELECT duration_ms, engine_usd_micros FROM case_results")).one()
    assert tuple(row) == (2000.0, 42)


def test_upsert_same_key_twice_updates_one_row(store: Store, run_id: str, result_factory) -> None:
    store.upsert_case_result(result_factory(run_id, "a", score=0.25, probes=3, checks=2))
    store.upsert_case_result(result_factory(run_id, "a", score=0.75, probes=1, checks=1))

    (stored,) = store.case_results(run_id)
    assert stored.score == 0.75
    assert len(stored.probes) == 1
    assert _count(store, "case_results") == 1
    assert _count(store, "probe_results") == 1
    assert _count(store, "check_results") == 1


def test_probe_and_check_rows_are_queryable(store: Store, run_id: str, result_factory) -> None:
    store.upsert_case_result(result_factory(run_id, "a", probes=3, checks=2))
    store.upsert_case_result(result_factory(run_id, "b", 1, probes=2, checks=0))
    with store.engine.connect() as conn:
        probes = conn.execute(
            text("SELECT case_id, trial, probe, hit, rank FROM probe_results ORDER BY id")
        ).all()
        checks = conn.execute(
            text("SELECT case_id, query, kind, status FROM check_results ORDER BY id")
        ).all()
    assert [tuple(p) for p in probes] == [
        ("a", 0, "p0", True, 1),
        ("a", 0, "p1", False, None),
        ("a", 0, "p2", True, 3),
        ("b", 1, "p0", True, 1),
        ("b", 1, "p1", False, None),
    ]
    assert [tuple(c) for c in checks] == [
        ("a", 0, "contains", "failed"),
        ("a", 1, "contains", "failed"),
    ]


def test_done_result_is_not_replaced_by_a_failed_retry(
    store: Store, run_id: str, result_factory
) -> None:
    assert store.upsert_case_result(result_factory(run_id, "a", score=0.5)) is True
    retry = result_factory(run_id, "a", status=CaseStatus.error, score=None, probes=0)
    assert store.upsert_case_result(retry) is False
    (kept,) = store.case_results(run_id)
    assert (kept.status, kept.score, len(kept.probes)) == (CaseStatus.done, 0.5, 2)
    assert _count(store, "probe_results") == 2

    assert store.upsert_case_result(result_factory(run_id, "b", status=CaseStatus.error)) is True
    assert store.upsert_case_result(result_factory(run_id, "b", score=0.9)) is True
    assert [r.status for r in store.case_results(run_id)] == [CaseStatus.done, CaseStatus.done]


def test_result_for_unknown_run_is_refused(store: Store, run_id: str, result_factory) -> None:
    with pytest.raises(UnknownRun):
        store.upsert_case_result(result_factory("ghost", "a"))
    with pytest.raises(UnknownRun):
        store.case_results("ghost")
    assert _count(store, "case_results") == 0


def test_foreign_keys_are_enforced(store: Store, run_id: str) -> None:
    now = datetime.now(UTC).replace(tzinfo=None).isoformat(sep=" ")
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO case_results (run_id, case_id, trial, kind, status, engine, tenant,"
                " engine_usd_micros, answerer_usd_micros, payload, created_at, updated_at)"
                " VALUES ('ghost', 'a', 0, 'fixture', 'done', 'e', 't', 0, 0, '{}', :n, :n)"
            ),
            {"n": now},
        )


def test_missing_cases_lists_every_planned_case_without_a_done_result(
    store: Store, run_id: str, result_factory
) -> None:
    assert store.missing_cases(run_id) == PLAN
    store.upsert_case_result(result_factory(run_id, "a"))
    store.upsert_case_result(result_factory(run_id, "b", 0, status=CaseStatus.error))
    store.upsert_case_result(result_factory(run_id, "b", 1, status=CaseStatus.skipped_budget))
    store.upsert_case_result(result_factory(run_id, "unplanned"))
    store.mark_lost(run_id, [CaseKey("c", 0)])
    assert store.missing_cases(run_id) == PLAN[1:]

    store.upsert_case_result(result_factory(run_id, "b", 1))
    assert store.missing_cases(run_id) == [PLAN[1], PLAN[3]]
    with pytest.raises(UnknownRun):
        store.missing_cases("ghost")


def test_mark_lost_fills_only_silence(store: Store, run_id: str, result_factory) -> None:
    store.upsert_case_result(result_factory(run_id, "a"))
    store.upsert_case_result(result_factory(run_id, "b", 0, status=CaseStatus.error))

    marked = store.mark_lost(run_id, [("a", 0), ("b", 0), ("c", 0)], reason="worker vanished")
    assert marked == [CaseKey("c", 0)]
    assert store.mark_lost(run_id, [("c", 0)]) == []

    by_key = {(r.case_id, r.trial): r for r in store.case_results(run_id)}
    assert {k: r.status for k, r in by_key.items()} == {
        ("a", 0): CaseStatus.done,
        ("b", 0): CaseStatus.error,
        ("c", 0): CaseStatus.lost,
    }
    lost = by_key[("c", 0)]
    assert (lost.kind, lost.dimension, lost.engine, lost.error) == (
        "fixture",
        "conflict",
        "naive",
        "worker vanished",
    )

    # The slow worker's real answer still lands on top of the lost marker.
    assert store.upsert_case_result(result_factory(run_id, "c", score=0.3)) is True
    assert store.get_run(run_id).counts == {CaseStatus.done: 2, CaseStatus.error: 1}


def test_mark_lost_refuses_unplanned_cases_and_writes_nothing(store: Store, run_id: str) -> None:
    with pytest.raises(ValueError, match="not in the plan"):
        store.mark_lost(run_id, [("a", 0), ("zzz", 0)])
    with pytest.raises(UnknownRun):
        store.mark_lost("ghost", [("a", 0)])
    assert store.case_results(run_id) == []
