"""SQLite specifics: the pragmas that make one file safe for several writer processes."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from memeval.results import CaseResult
from memeval.store import PlannedCase, open_store
from memeval.store.engine import BUSY_TIMEOUT_MS


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "nested" / "dir" / "runs.db"


def _run(url: str) -> str:
    with open_store(url) as store:
        plan = [PlannedCase(case_id="a", kind="fixture")]
        return store.create_run(label="t", engine="naive", suite="all", planned=plan).id


def test_nothing_is_touched_before_first_use(db_path: Path) -> None:
    store = open_store(f"sqlite:///{db_path}")
    assert not db_path.parent.exists()
    store.list_runs()
    assert db_path.exists()


def test_wal_busy_timeout_and_foreign_keys(db_path: Path) -> None:
    url = f"sqlite:///{db_path}"
    _run(url)
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    with open_store(url) as store, store.engine.connect() as conn:
        assert conn.execute(text("PRAGMA busy_timeout")).scalar_one() == BUSY_TIMEOUT_MS
        assert conn.execute(text("PRAGMA foreign_keys")).scalar_one() == 1


def test_writer_waits_for_a_held_write_lock(db_path: Path, result_factory) -> None:
    url = f"sqlite:///{db_path}"
    run_id = _run(url)
    holder = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.0, holder.commit)
    release.start()
    try:
        started = time.monotonic()
        with open_store(url) as store:
            result: CaseResult = result_factory(run_id, "a")
            assert store.upsert_case_result(result) is True
        waited = time.monotonic() - started
    finally:
        release.join()
        holder.close()
    assert waited >= 0.9  # it queued behind the lock rather than failing or skipping it


def test_dispose_then_reuse(db_path: Path) -> None:
    store = open_store(f"sqlite:///{db_path}")
    first = store.engine
    store.dispose()
    assert store.engine is not first
    assert store.list_runs() == []
