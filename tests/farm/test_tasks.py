"""The tasks called in this process, without a broker: what they store and what they return."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from celery import Celery

from memeval.evaluation.finalize import finalize
from memeval.evaluation.jobs import CaseJob, planned
from memeval.runner import RunOptions
from memeval.store import RunStatus, Store, open_store
from memeval.suites.catalog import resolve
from memeval.suites.loader import CASE_ADAPTER
from memeval_farm import runtime
from memeval_farm.config import make_app
from memeval_farm.names import FINISH_RUN, FINISH_SWEEP, RUN_CASE
from memeval_farm.runtime import RUNTIME
from memeval_farm.settings import FarmSettings


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    url = f"sqlite:///{tmp_path / 'memeval.db'}"
    monkeypatch.setenv("MEMEVAL_DATABASE_URL", url)
    RUNTIME.close()  # the task reads the store this test points at
    with open_store(url) as opened:
        yield opened
    RUNTIME.close()


@pytest.fixture
def app() -> Celery:
    return make_app(FarmSettings())


def jobs(engine: str = "reference") -> list[CaseJob]:
    cases = [
        c.case for c in resolve("all").cases if c.case.id.endswith(("cfo_on_date", "isolation"))
    ]
    return [
        CaseJob(run_id="r1", engine=engine, case=case, trial=0, options=RunOptions())
        for case in cases
    ]


def test_a_task_executed_twice_leaves_one_row_and_the_same_reference(
    app: Celery, store: Store
) -> None:
    (job, *_) = jobs()
    store.create_run(run_id="r1", label="r1", engine="reference", suite="all",
                     planned=[planned(job.case, job.trial)])  # fmt: skip
    message = job.message()
    first = app.tasks[RUN_CASE].apply(message["args"], message["kwargs"]).get()
    second = app.tasks[RUN_CASE].apply(message["args"], message["kwargs"]).get()
    assert first == second == {"run_id": "r1", "case_id": job.case.id, "trial": 0}
    (result,) = store.case_results("r1")
    assert result.status.value == "done" and result.score is not None


def test_the_chord_callback_folds_from_the_store_and_may_run_twice(
    app: Celery, store: Store
) -> None:
    every = jobs()
    store.create_run(run_id="r1", label="r1", engine="reference", suite="all",
                     planned=[planned(j.case, j.trial) for j in every])  # fmt: skip
    for job in every:
        message = job.message()
        app.tasks[RUN_CASE].apply(message["args"], message["kwargs"])
    # The chord's arguments are ignored: a redelivered task may have counted twice there.
    first = app.tasks[FINISH_RUN].apply(([{"bogus": 1}] * 7, "r1")).get()
    closed = store.get_run("r1")
    second = app.tasks[FINISH_RUN].apply(([], "r1")).get()
    assert first == second
    assert first["counts"] == {"done": len(every)} and first["missing"] == 0
    assert closed is not None and closed.status is RunStatus.finished
    assert store.get_run("r1").finished_at == closed.finished_at  # type: ignore[union-attr]


def test_the_sweep_callback_closes_each_of_its_runs_and_may_run_twice(
    app: Celery, store: Store
) -> None:
    every = jobs()
    for run_id in ("s.0", "s.1"):
        store.create_run(run_id=run_id, label=f"s/{run_id}", engine="reference", suite="all",
                         planned=[planned(j.case, j.trial) for j in every])  # fmt: skip
    for job in every:  # s.0 has all its results, s.1 only its first
        for run_id in ("s.0", "s.1")[: 2 if job is every[0] else 1]:
            message = job.model_copy(update={"run_id": run_id}).message()
            app.tasks[RUN_CASE].apply(message["args"], message["kwargs"])
    first = app.tasks[FINISH_SWEEP].apply(([], ["s.0", "s.1"])).get()
    second = app.tasks[FINISH_SWEEP].apply(([{"bogus": 1}], ["s.0", "s.1"])).get()
    assert first == second
    assert [(s["run_id"], s["missing"]) for s in first] == [("s.0", 0), ("s.1", len(every) - 1)]
    assert store.get_run("s.0").status is RunStatus.finished  # type: ignore[union-attr]
    assert store.get_run("s.1").status is RunStatus.running  # type: ignore[union-attr]


def test_finalize_leaves_a_run_that_misses_cases_running(store: Store) -> None:
    every = jobs()
    store.create_run(run_id="r1", label="r1", engine="reference", suite="all",
                     planned=[planned(j.case, j.trial) for j in every])  # fmt: skip
    report = finalize(store, "r1")
    assert len(report.missing) == len(every)
    assert store.get_run("r1").status is RunStatus.running  # type: ignore[union-attr]
    interrupted = finalize(store, "r1", RunStatus.interrupted)
    assert store.get_run("r1").status is RunStatus.interrupted  # type: ignore[union-attr]
    assert interrupted.finished_at is not None


def test_a_message_holds_the_case_and_names_the_engine_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-sentinel-123456")
    (job, *_) = jobs()
    message = job.message()
    assert message["args"] == ("r1", job.case.id, 0)  # Flower's search finds the run id
    assert message["kwargs"]["engine"] == "reference"
    assert "sk-or-sentinel" not in repr(message)
    rebuilt = CaseJob(
        run_id="r1",
        engine="reference",
        case=CASE_ADAPTER.validate_json(message["kwargs"]["case"]),
        trial=0,
        options=message["kwargs"]["options"],
    )
    assert rebuilt == job
    assert "assertions" not in message["kwargsrepr"]  # events and logs skip the case body


def test_a_case_of_an_interrupted_run_is_skipped_once_the_status_is_seen(
    app: Celery, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The status is cached per worker process for `STATUS_TTL_S`: an interrupt is seen late
    by at most that long, and never missed after it."""
    first, second = jobs()
    store.create_run(run_id="r1", label="r1", engine="reference", suite="all",
                     planned=[planned(j.case, j.trial) for j in (first, second)])  # fmt: skip
    monkeypatch.setattr(runtime, "STATUS_TTL_S", 60.0)
    assert RUNTIME.run_status("r1") is RunStatus.running
    finalize(store, "r1", RunStatus.interrupted)
    assert RUNTIME.run_status("r1") is RunStatus.running  # still within the TTL

    monkeypatch.setattr(runtime, "STATUS_TTL_S", 0.0)
    message = second.message()
    assert app.tasks[RUN_CASE].apply(message["args"], message["kwargs"]).get() == (
        second.reference()
    )
    assert store.case_results("r1") == []
