"""Flower as a user meets it on the fleet: a real `memeval flower` behind basic auth, a real
worker, a dispatch-only `memeval run`. Its task list names each case's run, label and case;
the run's label finds them in Flower's search; and the health check docker-compose.yml gives
Flower passes without credentials while everything else still asks for them."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
import yaml

from tests.deploy.test_compose import COMPOSE
from tests.farm.conftest import Farm, stop

AUTH = ("ann", "pw-for-flower")
LABEL = "nightly-flower"
CASES = ("cfo_on_date", "brain_lookup")


def test_flower_lists_each_case_with_its_run_label_and_case(shared: Farm) -> None:
    shared.env["MEMEVAL_FLOWER_BASIC_AUTH"] = ":".join(AUTH)
    port = _free_port()
    flower = shared.start("flower", "--port", str(port), log="flower.log")
    worker = shared.start("worker", "--concurrency", "2", log="worker.log")
    try:
        run = shared.run("run", *(a for c in CASES for a in ("--only", c)), "--label", LABEL,
                         "--out", str(shared.tmp / "out" / LABEL))  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        (run_id,) = shared.rows("select id from runs where label = ?", LABEL)[0]

        case_ids = [c for (c,) in shared.rows("select case_id from case_results")]
        assert len(case_ids) == len(CASES) and all(c.endswith(CASES) for c in case_ids)
        by_id = _run_cases(port, run_id)
        shown = sorted(t["args"] for t in by_id.values())
        assert shown == sorted(f"run={run_id} label='{LABEL}' case='{c}' trial=0" for c in case_ids)
        assert _run_cases(port, LABEL).keys() == by_id.keys()  # the label finds the run's cases

        # The label again: the store gives the run a suffix, and Flower shows that label.
        again = shared.run("run", "--only", CASES[0], "--label", LABEL,
                           "--out", str(shared.tmp / "out" / "again"))  # fmt: skip
        assert again.returncode == 0, again.stdout + again.stderr
        (second,) = shared.rows("select id from runs where label = ?", f"{LABEL}-2")[0]
        (task,) = _run_cases(port, second, count=1).values()
        assert f"run={second} label='{LABEL}-2' case=" in task["args"]

        assert httpx.get(f"http://127.0.0.1:{port}/api/tasks").status_code == 401
        assert _compose_healthcheck(port).returncode == 0
    finally:
        stop(worker)
        stop(flower)
    flower.wait()
    down = _compose_healthcheck(port)
    assert down.returncode != 0 and "Connection refused" in down.stderr


def _run_cases(port: int, search: str, count: int = len(CASES)) -> dict[str, dict]:
    """The `run_case` tasks Flower's search finds, once its events have landed."""
    deadline = time.monotonic() + 30
    while True:
        try:
            reply = httpx.get(
                f"http://127.0.0.1:{port}/api/tasks", params={"search": search}, auth=AUTH
            )
            cases = {
                task_id: task
                for task_id, task in reply.json().items()
                if task["name"] == "memeval.run_case" and task["state"] == "SUCCESS"
            }
            if len(cases) == count:
                return cases
        except (httpx.TransportError, ValueError):
            pass
        assert time.monotonic() < deadline, f"Flower never listed {search}'s cases"
        time.sleep(0.3)


def _compose_healthcheck(port: int) -> subprocess.CompletedProcess[str]:
    """Flower's health check from docker-compose.yml, run as Docker runs it, on `port`."""
    test = yaml.safe_load(COMPOSE.read_text())["services"]["flower"]["healthcheck"]["test"]
    cmd, program, *args = test
    assert (cmd, program) == ("CMD", "python")
    args = [a.replace("127.0.0.1:5555", f"127.0.0.1:{port}") for a in args]
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=30, check=False
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
