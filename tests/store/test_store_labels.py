"""Labels are claimed when a run is recorded, and a run is found by id, label or `latest`."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import text

from memeval.errors import UnknownRun
from memeval.store import LATEST, PlannedCase, Store

PLAN = [PlannedCase(case_id="dimensions/temporal/a", kind="fixture", dimension="temporal")]


def _create(store: Store, label: str, **extra: object) -> str:
    record = store.create_run(label=label, engine="naive", suite="all", planned=PLAN, **extra)
    return record.label


def test_a_taken_label_gets_the_first_free_suffix(store: Store) -> None:
    assert [_create(store, "nightly") for _ in range(3)] == ["nightly", "nightly-2", "nightly-3"]
    # A suffix someone chose by hand is skipped, and a label that only starts alike is free.
    assert _create(store, "ci-4") == "ci-4"
    assert _create(store, "ci") == "ci"
    assert _create(store, "ci") == "ci-2"
    assert _create(store, "ci-2-x") == "ci-2-x"
    # LIKE wildcards in a label match only themselves.
    assert _create(store, "a_b") == "a_b"
    assert _create(store, "axb") == "axb"
    assert _create(store, "a%b") == "a%b"
    assert _create(store, "a_b") == "a_b-2"
    assert sorted(r.label for r in store.list_runs(100)).count("nightly-2") == 1


def test_concurrent_runs_with_one_label_get_distinct_labels(store: Store) -> None:
    with ThreadPoolExecutor(max_workers=6) as pool:
        labels = list(pool.map(lambda _: _create(store, "loop"), range(12)))
    assert sorted(labels) == sorted(["loop", *(f"loop-{n}" for n in range(2, 13))])


def test_resolve_by_id_label_and_latest(store: Store) -> None:
    first = store.create_run(label="base", engine="naive", suite="all", planned=PLAN)
    second = store.create_run(label="cand", engine="naive", suite="all", planned=PLAN)
    assert store.resolve_run(first.id).record.id == first.id
    assert store.resolve_run("base") == (store.get_run(first.id), [])
    assert store.resolve_run(LATEST).record.id == second.id
    # A run id wins over a label that happens to spell it.
    store.create_run(label=first.id, engine="naive", suite="all", planned=PLAN)
    assert store.resolve_run(first.id).record.label == "base"


def test_a_label_several_runs_share_names_the_newest_and_says_so(store: Store) -> None:
    ids = [
        store.create_run(label=f"old-{i}", engine="e", suite="all", planned=PLAN).id
        for i in range(3)
    ]
    # Stores written before labels were claimed hold duplicates.
    with store.engine.begin() as connection:
        connection.execute(text("UPDATE runs SET label = 'dup'"))
    match = store.resolve_run("dup")
    assert match.record.id == ids[-1]
    assert match.shadowed == [ids[1], ids[0]]
    assert match.note("dup") == (
        f"`dup` names 3 runs; using the newest, {ids[-1]} (older: {ids[1]}, {ids[0]})"
    )
    assert store.resolve_run(ids[0]).note(ids[0]) is None


def test_an_unknown_reference_names_itself_and_memeval_runs(store: Store) -> None:
    with pytest.raises(UnknownRun) as raised:
        store.resolve_run("nope")
    assert raised.value.exit_code == 2
    assert "no run `nope`" in raised.value.message and "memeval runs" in raised.value.fix
    with pytest.raises(UnknownRun):
        store.resolve_run(LATEST)  # an empty store has no newest run


def test_the_subset_is_kept_with_the_run(store: Store) -> None:
    part = store.create_run(
        label="t", engine="e", suite="all", planned=PLAN, options={"k": 5}, subset="temporal only"
    )
    whole = store.create_run(label="w", engine="e", suite="all", planned=PLAN)
    assert store.get_run(part.id).subset == "temporal only"
    assert store.get_run(part.id).options["k"] == 5
    assert store.get_run(whole.id).subset is None
