from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from memeval.errors import UnknownRun, UsageError
from memeval.results import CaseStatus
from memeval.store import PlannedCase, RunStatus, Store

PLAN = [
    PlannedCase(case_id="dimensions/temporal/a", kind="fixture", dimension="temporal"),
    PlannedCase(case_id="lifecycle/b", trial=0, kind="scenario"),
    PlannedCase(case_id="lifecycle/b", trial=1, kind="scenario"),
]


def _run(store: Store, run_id: str, **options: object) -> None:
    store.create_run(
        run_id=run_id,
        label=f"label-{run_id}",
        engine="naive",
        suite="all",
        planned=PLAN,
        options=options,
        prompt_version="v3",
    )


def test_create_get_and_list_runs(store: Store) -> None:
    before = datetime.now(UTC)
    created = store.create_run(
        label="nightly", engine="naive", suite="all", planned=PLAN, options={"trials": 2}
    )
    _run(store, "second")

    fetched = store.get_run(created.id)
    assert fetched == created
    assert fetched.status is RunStatus.running
    assert fetched.planned == PLAN
    assert fetched.planned_count == 3
    assert fetched.options == {"trials": 2}
    assert fetched.created_at.tzinfo is not None
    assert fetched.created_at >= before.replace(microsecond=0)
    assert fetched.finished_at is None
    assert store.get_run("no-such-run") is None

    assert [r.id for r in store.list_runs()] == ["second", created.id]
    assert [r.id for r in store.list_runs(limit=1)] == ["second"]
    assert store.list_runs()[0].prompt_version == "v3"


def test_list_runs_counts_results_per_status(store: Store, result_factory) -> None:
    _run(store, "r")
    store.upsert_case_result(result_factory("r", "dimensions/temporal/a"))
    store.upsert_case_result(result_factory("r", "lifecycle/b", status=CaseStatus.error))
    store.upsert_case_result(result_factory("r", "lifecycle/b", 1))
    (listed,) = store.list_runs()
    assert listed.counts == {CaseStatus.done: 2, CaseStatus.error: 1}
    assert store.get_run("r").counts == listed.counts


def test_run_id_and_plan_must_be_unique(store: Store) -> None:
    _run(store, "dup")
    with pytest.raises(UsageError, match="already exists"):
        _run(store, "dup")
    with pytest.raises(ValueError, match="more than once"):
        store.create_run(label="x", engine="naive", suite="all", planned=[PLAN[0], PLAN[0]])
    assert [r.id for r in store.list_runs()] == ["dup"]


def test_finish_and_reopen(store: Store) -> None:
    _run(store, "r")
    interrupted = store.finish_run("r", RunStatus.interrupted)
    assert interrupted.status is RunStatus.interrupted
    assert interrupted.finished_at is not None
    assert interrupted.finished_at.tzinfo is not None
    assert store.get_run("r") == interrupted

    reopened = store.reopen_run("r")
    assert (reopened.status, reopened.finished_at) == (RunStatus.running, None)
    assert store.finish_run("r").status is RunStatus.finished
    assert store.get_run("r").status is RunStatus.finished

    with pytest.raises(ValueError, match="final status"):
        store.finish_run("r", RunStatus.running)
    with pytest.raises(UnknownRun):
        store.finish_run("ghost")


def test_secrets_never_reach_the_database(store: Store) -> None:
    _run(
        store,
        "r",
        model="gpt-x",
        OPENROUTER_API_KEY="sk-or-111",
        auth_token="tok-222",
        engine_opts={"client_secret": "sec-333", "timeout": 5, "DB_Password": "pw-444"},
        profiles=[{"name": "a", "apikey": "sk-555"}],
    )
    expected = {"model": "gpt-x", "engine_opts": {"timeout": 5}, "profiles": [{"name": "a"}]}
    assert store.get_run("r").options == expected
    with store.engine.connect() as conn:
        raw = conn.execute(text("SELECT CAST(options AS TEXT) FROM runs")).scalar_one()
    assert "gpt-x" in raw
    for secret in ("sk-or-111", "tok-222", "sec-333", "pw-444", "sk-555"):
        assert secret not in raw
