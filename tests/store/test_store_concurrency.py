"""Prefork workers in miniature: forked processes sharing one Store object built in the parent."""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from multiprocessing.synchronize import Barrier

from sqlalchemy import text

from memeval.store import PlannedCase, Store, open_store

PROCESSES = 4
UPSERTS = 50
STRIDE = 25  # each process starts half-way into the previous one's keys, so keys overlap
KEYS = STRIDE * (PROCESSES - 1) + UPSERTS  # 125 distinct (case, trial) keys in all
FORK = multiprocessing.get_context("fork")


def _key(n: int) -> tuple[str, int]:
    return f"case-{n // 2:03d}", n % 2


def _worker(
    store: Store, run_id: str, offset: int, make_result: Callable, barrier: Barrier, errors
) -> None:
    try:
        barrier.wait(timeout=60)
        for n in range(offset, offset + UPSERTS):
            case_id, trial = _key(n)
            store.upsert_case_result(make_result(run_id, case_id, trial, score=offset / 100))
    except BaseException:
        errors.put(traceback.format_exc())
        raise


def _run_all(target: Callable, args_for: Callable[[int], tuple]) -> list[str]:
    barrier = FORK.Barrier(PROCESSES)
    errors = FORK.Queue()
    procs = [
        FORK.Process(target=target, args=(*args_for(i), barrier, errors)) for i in range(PROCESSES)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=240)
    found = []
    while not errors.empty():
        found.append(errors.get())
    found += [f"process exited with {p.exitcode}" for p in procs if p.exitcode != 0]
    return found


def test_concurrent_upserts_from_forked_processes(store: Store, result_factory) -> None:
    plan = [PlannedCase(case_id=c, trial=t, kind="fixture") for c, t in map(_key, range(KEYS))]
    # The parent uses the store first, so children inherit a live engine they must not reuse.
    run = store.create_run(label="load", engine="naive", suite="all", planned=plan)

    errors = _run_all(_worker, lambda i: (store, run.id, i * STRIDE, result_factory))

    assert errors == []  # "database is locked" on SQLite would surface here
    with store.engine.connect() as conn:
        counts = [
            conn.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one()
            for table in ("case_results", "probe_results", "check_results")
        ]
    assert counts == [KEYS, 2 * KEYS, KEYS]
    assert store.missing_cases(run.id) == []
    assert len(store.case_results(run.id)) == KEYS


def _first_use(url: str, index: int, barrier: Barrier, errors) -> None:
    try:
        barrier.wait(timeout=60)
        open_store(url).create_run(
            run_id=f"run-{index}", label="race", engine="naive", suite="all", planned=[]
        )
    except BaseException:
        errors.put(traceback.format_exc())
        raise


def test_first_use_by_many_processes_at_once(store_url: str) -> None:
    """Workers that all start together must create the schema (and SQLite's WAL) only once."""
    errors = _run_all(_first_use, lambda i: (store_url, i))
    assert errors == []
    with open_store(store_url) as store:
        assert sorted(r.id for r in store.list_runs()) == [f"run-{i}" for i in range(PROCESSES)]
