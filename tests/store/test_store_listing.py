"""`memeval runs` reads a local store through sqlite3 alone: what it lists must be exactly what
the store itself hands back, on SQLite and on Postgres (where `Store.list_runs` runs the same
SQL on psycopg's connection)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memeval.results import CaseStatus
from memeval.store import RunStatus, Store, open_store
from memeval.store.listing import local_file, newest_runs
from memeval.store.models import PlannedCase

PLAN = [
    PlannedCase(case_id=f"dimensions/temporal/{i}", kind="fixture", dimension="temporal")
    for i in range(3)
]


def _runs(store: Store, result_factory) -> None:
    store.create_run(label="a", engine="naive", suite="all", planned=PLAN, options={"k": [1]})
    second = store.create_run(label="b", engine="reference", suite="all", planned=PLAN[:1])
    store.upsert_case_result(result_factory(second.id, PLAN[0].case_id))
    store.upsert_case_result(result_factory(second.id, "x", status=CaseStatus.error))
    store.finish_run(second.id, RunStatus.interrupted)


def test_the_store_lists_runs_with_their_counts_and_times(store: Store, result_factory) -> None:
    _runs(store, result_factory)
    newest, oldest = store.list_runs()
    assert (newest.label, oldest.label) == ("b", "a")
    assert newest.counts == {CaseStatus.done: 1, CaseStatus.error: 1} and oldest.counts == {}
    assert newest.status is RunStatus.interrupted and newest.finished_at is not None
    assert newest.finished_at.tzinfo is not None and oldest.created_at.tzinfo is not None
    assert oldest.options == {"k": [1]} and oldest.planned == PLAN
    assert store.get_run(newest.id) == newest


def test_sqlite3_alone_reads_what_the_store_lists(
    tmp_path: Path, result_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store = open_store(url)
    _runs(store, result_factory)
    monkeypatch.setenv("MEMEVAL_DATABASE_URL", url)
    path = local_file()
    assert path == tmp_path / "runs.db"
    with sqlite3.connect(path) as connection:
        assert newest_runs(connection, 20) == store.list_runs(20)
        assert newest_runs(connection, 1) == store.list_runs(1)


@pytest.mark.parametrize(
    "url", ["postgresql://h/db", "sqlite:///{tmp}/runs.db?timeout=5", "sqlite:///{tmp}/none.db"]
)
def test_other_stores_go_through_the_store(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "runs.db").touch()
    monkeypatch.setenv("MEMEVAL_DATABASE_URL", url.format(tmp=tmp_path))
    assert local_file() is None
