"""A sweep on the machine's Redis: one chord carries every variant's cases, model-interleaved,
`memeval worker` processes run them, and the chord callback closes every run of the sweep."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import redis

from memeval.evaluation.columns import ColumnPlan, Interleaved
from memeval.evaluation.jobs import planned
from memeval.evaluation.selection import Selection
from memeval.llm.sweep import SweepReport
from memeval.runner import RunOptions
from memeval.store import open_store
from memeval_farm.config import make_app
from memeval_farm.dispatch import dispatch
from memeval_farm.settings import FarmSettings
from tests.farm.conftest import Farm, stop, wait_for
from tests.llm.server import KEY, FakeOpenRouter

MODELS = ["test/cheap", "test/dear"]


@pytest.fixture
def server(shared: Farm) -> Iterator[FakeOpenRouter]:
    """The answering models, for the dispatching shell (prices, key) and the workers alike."""
    shared.env.update(OPENROUTER_API_KEY=KEY, MEMEVAL_CACHE_DIR=str(shared.tmp / "cache"))
    with FakeOpenRouter() as fake:
        yield fake


def test_a_sweep_runs_on_a_shared_broker(shared: Farm, server: FakeOpenRouter, redis_url: str):
    out = shared.tmp / "sweep.json"
    worker = shared.start("worker", "--concurrency", "2", log="worker.log")
    try:
        done = shared.run("sweep", "--models", ",".join(MODELS), "--budget-usd", "5",
                          "--dimension", "multihop", "--base-url", server.base_url,
                          "--json", str(out))  # fmt: skip
    finally:
        stop(worker)
    assert done.returncode == 0, done.stdout + done.stderr
    report = SweepReport.model_validate_json(out.read_text())
    # The budget was opened, and spent, in the shared Redis the workers answer from.
    budget = redis.Redis.from_url(redis_url)
    key = f"memeval:budget:sweep:{report.sweep_id}"
    try:
        assert int(budget.hget(key, "spent") or 0) == server.billed_micros > 0
    finally:
        budget.delete(*budget.keys(f"{key}*"))
        budget.close()
    sid = report.sweep_id
    assert sorted(shared.rows("select label, status from runs")) == [
        (f"{sid}/test/cheap", "finished"),
        (f"{sid}/test/dear", "finished"),
    ]
    assert report.done == report.planned == 2 * 10 and report.coverage == 1.0
    assert round(report.spent_usd * 1e6) == server.billed_micros
    assert report.comparison is not None and "test/dear vs test/cheap" in done.stdout


def test_one_chord_interleaves_a_sweep_and_its_callback_closes_every_run(
    shared: Farm, redis_url: str, namespace: str
) -> None:
    """Dispatched with nobody waiting: only the chord callback can close the runs."""
    settings = FarmSettings(broker_url=redis_url, namespace=namespace)
    app = make_app(settings)
    store = open_store(shared.env["MEMEVAL_DATABASE_URL"])
    selection = Selection(suite="dimensions", only=sorted(_THREE))
    cases = list(selection.cases())
    plan = ColumnPlan(selection=selection, once=[planned(c, 0) for c in cases])
    run_ids = ["sweep.0", "sweep.1"]
    runs = Interleaved(
        plan=plan,
        trials=1,
        columns=[
            plan.record(
                store,
                run_id=run_id,
                label=f"sweep/{run_id}",
                engine="reference",
                suite="dimensions",
                trials=1,
                options=RunOptions(),
                budget_micros=None,
            )
            for run_id in run_ids
        ],
    )
    dispatch(app, run_ids, runs.jobs())
    broker = redis.Redis.from_url(redis_url)
    queued = broker.lrange(settings.key_prefix + settings.queue, 0, -1)
    sent = [json.loads(m)["headers"]["argsrepr"] for m in reversed(queued)]  # oldest first
    assert sent == [
        f"run={r} label='sweep/{r}' case={c.id!r} trial=0" for c in cases for r in run_ids
    ]

    worker = shared.start("worker", "--concurrency", "2", log="worker.log")
    try:
        wait_for(
            lambda: shared.rows("select status from runs") == [("finished",)] * 2,
            60,
            "the chord callback to finish every run of the sweep",
        )
    finally:
        stop(worker)
    assert sorted(shared.rows("select run_id, status from case_results")) == sorted(
        (r, "done") for r in run_ids for _ in cases
    )


_THREE = {"cfo_on_date", "manager_exclusive_slot", "never_stored_parking"}
