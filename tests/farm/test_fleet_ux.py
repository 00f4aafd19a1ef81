"""What a user driving a fleet meets: distinct worker names, `runs` output a script can read."""

from __future__ import annotations

import json

from tests.farm.conftest import Farm, stop, wait_for
from workers.config import make_app
from workers.settings import FarmSettings


def test_two_workers_on_one_host_have_distinct_names(shared: Farm, redis_url: str) -> None:
    first = shared.start("worker", "--concurrency", "1", "--pool", "threads", log="w1.log")
    second = shared.start("worker", "--concurrency", "1", "--pool", "threads", log="w2.log")
    app = make_app(FarmSettings(broker_url=redis_url, namespace=shared.env["MEMEVAL_NAMESPACE"]))
    try:

        def both() -> dict | None:
            replies = app.control.ping(timeout=1.0) or []
            names = {name for reply in replies for name in reply}
            return names if len(names) == 2 else None

        names = wait_for(both, 60, "two workers answering a ping")
        assert all(name.startswith("memeval-") for name in names), names
    finally:
        stop(first)
        stop(second)
        app.close()
    logs = (shared.tmp / "w1.log").read_text() + (shared.tmp / "w2.log").read_text()
    assert "DuplicateNodenameWarning" not in logs


def test_runs_lists_whole_ids_and_json(farm: Farm) -> None:
    done = farm.run("run", "--engine", "naive", "--dimension", "temporal", "--label", "x" * 50)
    assert done.returncode == 0, done.stderr
    farm.env["COLUMNS"] = "80"
    table = farm.run("runs")
    listed = json.loads(farm.run("runs", "--json").stdout)
    assert table.returncode == 0 and len(listed) == 1
    assert listed[0]["label"] == "x" * 50 and listed[0]["status"] == "finished"
    assert listed[0]["id"] in table.stdout  # whole, so it can be pasted into `status`
