"""What a user driving a fleet meets: distinct worker names, `runs` output a script can read."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.farm.conftest import ROOT, Farm, stop, wait_for


def ping(farm: Farm) -> set[str]:
    """Node names answering a broadcast ping, asked by `celery inspect` in a subprocess: an
    in-process Celery client would leave kombu connections behind that hang later forks."""
    out = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "memeval_farm.app", "inspect", "ping", "--json",
         "--timeout", "1"],
        cwd=ROOT, env=farm.env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    try:
        return set(json.loads(out.stdout.strip().splitlines()[-1]))
    except (IndexError, ValueError):
        return set()  # no worker up yet: `inspect` exits 1 with a message


def _ready(farm: Farm, log: str) -> bool:
    return " ready." in (farm.tmp / log).read_text()  # Celery's line once the worker consumes


def test_two_workers_on_one_host_have_distinct_names(shared: Farm) -> None:
    first = shared.start("worker", "--concurrency", "1", "--pool", "threads", log="w1.log")
    second = shared.start("worker", "--concurrency", "1", "--pool", "threads", log="w2.log")
    try:
        # Each worker logs that it is ready: a ping (a process of its own) goes once both have.
        wait_for(lambda: all(_ready(shared, log) for log in ("w1.log", "w2.log")), 90, "ready")
        names = wait_for(lambda: (names := ping(shared)) and len(names) == 2 and names, 90, "two")
        assert all(name.startswith("memeval-") for name in names), names
    finally:
        stop(first)
        stop(second)
    logs = (shared.tmp / "w1.log").read_text() + (shared.tmp / "w2.log").read_text()
    assert "DuplicateNodenameWarning" not in logs


def test_runs_lists_whole_ids_and_json(farm: Farm) -> None:
    done = farm.run("run", "--engine", "naive", "--dimension", "temporal", "--label", "x" * 50,
                    "--out", str(farm.tmp / "out"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    farm.env["COLUMNS"] = "80"
    table = farm.run("runs")
    listed = json.loads(farm.run("runs", "--json").stdout)
    assert table.returncode == 0 and len(listed) == 1
    assert listed[0]["label"] == "x" * 50 and listed[0]["status"] == "finished"
    assert listed[0]["id"] in table.stdout  # whole, so it can be pasted into `status`
