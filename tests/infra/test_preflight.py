"""One bad setting fails the run up front, in seconds, naming the fix: the engine's token, its
URL, the workers' store; and an engine whose credit runs out mid-run stops the run at once."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tests.farm.conftest import ROOT, Farm, wait_for
from tests.infra.conftest import free_port, wait_ready, worker

BAD_INPUT, CREDITS_OUT = 2, 6
FEW_SECONDS = 30.0  # the whole command, interpreter start included, on a 2-core machine loaded 5x


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def server(farm: Farm, *argv: str, port: int) -> Iterator[None]:
    proc = subprocess.Popen(
        [sys.executable, *argv], cwd=ROOT, env=farm.env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(lambda: _listening(port), 30, f"a server on port {port}")
        yield
    finally:
        proc.terminate()
        proc.wait(10)


def _timed(farm: Farm, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    done = farm.run(*args, timeout=120)
    return done, time.monotonic() - began


def test_a_wrong_token_or_a_dead_url_exits_2_in_seconds_naming_the_fix(farm: Farm) -> None:
    port = free_port()
    with server(farm, "-m", "memeval", "serve", "--port", str(port), "--token", "right",
                port=port):  # fmt: skip
        farm.env["MEMEVAL_HTTP_TOKEN"] = "wrong"
        done, took = _timed(farm, "run", "--engine", "http", "--url", f"http://127.0.0.1:{port}",
                            "--dimension", "temporal")  # fmt: skip
    assert done.returncode == BAD_INPUT, done.stdout + done.stderr
    assert took < FEW_SECONDS, f"{took:.1f}s"
    assert "MEMEVAL_HTTP_TOKEN" in done.stderr and "Traceback" not in done.stderr
    assert "wrong" not in done.stderr, "the token itself is never shown"
    assert not farm.has_results()

    dead = f"http://127.0.0.1:{free_port()}"
    done, took = _timed(farm, "run", "--engine", "http", "--url", dead, "--dimension", "temporal")
    assert done.returncode == BAD_INPUT, done.stdout + done.stderr
    assert took < FEW_SECONDS, f"{took:.1f}s"
    assert dead in done.stderr and "--url" in done.stderr and "Traceback" not in done.stderr


def test_a_fleet_worker_with_a_wrong_token_stops_the_run_before_dispatch(fleet: Farm) -> None:
    port = free_port()
    wrong = Farm(fleet.tmp, {**fleet.env, "MEMEVAL_HTTP_TOKEN": "wrong"})
    serve = ["-m", "memeval", "serve", "--port", str(port), "--token", "right"]
    with server(fleet, *serve, port=port), worker(wrong):
        wait_ready(fleet)
        done, took = _timed(fleet, "run", "--engine", "http", "--url",
                            f"http://127.0.0.1:{port}", "--dimension", "temporal")  # fmt: skip
    assert done.returncode == BAD_INPUT, done.stdout + done.stderr
    assert took < FEW_SECONDS, f"{took:.1f}s"
    assert "worker memeval-" in done.stderr and "MEMEVAL_HTTP_TOKEN" in done.stderr
    assert fleet.rows("select status from runs") == [("interrupted",)]
    assert not fleet.has_results(), "no case was sent"


def test_workers_on_another_store_than_the_dispatcher_exit_2_naming_the_variable(
    fleet: Farm, pg_url: str
) -> None:
    elsewhere = Farm(fleet.tmp, {**fleet.env, "MEMEVAL_DATABASE_URL": pg_url})
    with worker(elsewhere):
        wait_ready(fleet)
        done, took = _timed(fleet, "run", "--dimension", "temporal")
    assert done.returncode == BAD_INPUT, done.stdout + done.stderr
    assert took < FEW_SECONDS, f"{took:.1f}s"
    assert "MEMEVAL_DATABASE_URL" in done.stderr and "does not hold run" in done.stderr
    assert "postgresql" in done.stderr and "sqlite" in done.stderr
    assert "Traceback" not in done.stderr


def test_credits_running_out_mid_run_stop_it_with_the_rest_skipped(farm: Farm) -> None:
    port = free_port()
    farm.env["MEMEVAL_HTTP_TOKEN"] = "t0ken"
    credit = ["-m", "tests.infra.credit_server", "--port", str(port), "--token", "t0ken"]
    with server(farm, *credit, "--credit", "40", port=port):
        done = farm.run("run", "--engine", "http", "--url", f"http://127.0.0.1:{port}",
                        "--dimension", "temporal", "--dimension", "conflict", "--workers", "2",
                        "--out", str(farm.tmp / "out" / "credit"))  # fmt: skip
    assert done.returncode == CREDITS_OUT, done.stdout + done.stderr
    assert "credits exhausted" in done.stderr and "--resume" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    statuses = [s for (s,) in farm.rows("select status from case_results")]
    (planned,) = farm.rows("select planned_count from runs")[0]
    assert len(statuses) == planned, "every case is accounted for"
    assert "skipped_credits" in statuses and "error" not in statuses
    assert statuses.count("skipped_credits") > planned // 2, "the run stopped, it did not grind on"


def test_the_fleets_check_counts_its_slots_and_the_window_grows_to_twice_them(
    fleet: Farm,
) -> None:
    """Two workers of 3 and 2 processes answer the check with 5 slots: a window below twice
    that would leave freed workers waiting for the dispatcher to send more."""
    from memeval.store import open_store
    from memeval_farm.config import make_app
    from memeval_farm.dispatch import fleet_window
    from memeval_farm.preflight import check_fleet
    from memeval_farm.settings import FarmSettings

    store = open_store(fleet.env["MEMEVAL_DATABASE_URL"])
    store.create_run(run_id="slots", label="slots", engine="reference", suite="all", planned=[])
    app = make_app(FarmSettings(broker_url=fleet.env["MEMEVAL_BROKER_URL"]))
    said: list[str] = []
    try:
        with worker(fleet, concurrency=3, log="w3.log"), worker(fleet, log="w2.log"):
            deadline = time.monotonic() + 30
            while len(app.control.ping(timeout=0.5)) < 2:
                assert time.monotonic() < deadline, "the two workers did not both answer"
            slots = check_fleet(app, store, "slots", "reference", timeout=15, say=said.append)
    finally:
        app.close()
        store.dispose()
    assert slots == 5 and said == []
    assert fleet_window(128, slots) == 128 and fleet_window(8, slots) == 10
