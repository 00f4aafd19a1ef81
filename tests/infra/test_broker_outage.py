"""The broker going away mid-run: waited out, given up on cleanly, or restarted empty."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

from tests.farm.conftest import Farm, children, proc_file, wait_for
from tests.farm.engines import SLOW
from tests.infra.conftest import PrivateRedis, wait_ready, worker

OUTAGE_S = 7.0  # past redis-py's 5 s socket timeout, which crashed the watchdog before


def _slow(farm: Farm) -> Farm:
    """Every write of the Slow engine waits 0.3 s, so the run is still going when the broker
    goes: set before the worker starts, since the worker's engine reads it."""
    farm.env["MEMEVAL_TEST_DELAY"] = "0.3"
    return farm


def _start_run(farm: Farm, label: str) -> object:
    return farm.start("run", "--engine", SLOW, "--dimension", "temporal", "--label", label,
                      "--out", str(farm.tmp / "out" / label))  # fmt: skip


def _statuses(farm: Farm) -> dict[str, str]:
    return dict(farm.rows("select case_id, status from case_results"))


def test_an_outage_longer_than_the_socket_timeout_is_waited_out(
    fleet: Farm, private_redis: PrivateRedis
) -> None:
    with worker(_slow(fleet)):
        wait_ready(fleet)
        run = _start_run(fleet, "outage")
        wait_for(fleet.has_results, 60, "a first result")
        private_redis.stop()
        time.sleep(OUTAGE_S)
        private_redis.start()  # the same append-only file: the queue comes back
        assert run.wait(90) == 0, (fleet.tmp / "run.log").read_text()
    log = (fleet.tmp / "run.log").read_text()
    assert "Traceback" not in log
    assert "does not answer" in log and "MEMEVAL_BROKER_OUTAGE" in log
    back = re.search(
        r"answers again: it failed checks for (\d+)s, and last answered (\d+)s ago", log
    )
    assert back is not None, log
    assert int(back.group(1)) >= OUTAGE_S - 1  # never less than the outage really lasted
    assert "restarted from its append-only file" in log
    (planned,) = fleet.rows("select planned_count from runs")[0]
    statuses = _statuses(fleet)
    assert len(statuses) == planned and set(statuses.values()) == {"done"}


def test_a_broker_that_stays_away_interrupts_the_run_with_a_partial_report(
    fleet: Farm, private_redis: PrivateRedis
) -> None:
    fleet.env["MEMEVAL_BROKER_OUTAGE"] = "3"
    with worker(_slow(fleet)):
        wait_ready(fleet)
        run = _start_run(fleet, "gone")
        wait_for(fleet.has_results, 60, "a first result")
        private_redis.stop()
        started = time.monotonic()
        code = run.wait(60)
        waited = time.monotonic() - started
        private_redis.start()  # so the worker can shut down warm
    log = (fleet.tmp / "run.log").read_text()
    assert code == 1, log
    assert waited < 30, f"gave up after {waited:.0f}s with a patience of 3s"
    assert "Traceback" not in log
    (run_id, status) = fleet.rows("select id, status from runs")[0]
    assert status == "interrupted"
    assert "gave up on the broker" in log
    assert f"memeval run --resume {run_id}" in log.replace("\n", " ")
    report = json.loads((fleet.tmp / "out" / "gone" / "report.json").read_text())
    assert report["run_id"] == run_id and report["cases"], "the partial report holds results"


def test_a_restart_without_append_only_file_is_named_as_the_loss(
    fleet: Farm, tmp_path: Path
) -> None:
    volatile = PrivateRedis(tmp_path / "volatile", append_only=False)
    volatile.start()
    fleet.env["MEMEVAL_BROKER_URL"] = volatile.url
    try:
        with worker(_slow(fleet), concurrency=1):
            wait_ready(fleet)
            run = _start_run(fleet, "volatile")
            wait_for(fleet.has_results, 60, "a first result")
            assert volatile.queued() > 0, "the restart must meet cases still queued"
            before = volatile.run_id()
            volatile.stop()
            volatile.start()
            assert volatile.run_id() != before
            code = run.wait(90)
    finally:
        volatile.stop()
    log = (fleet.tmp / "run.log").read_text()
    assert code == 1, log
    assert "appendonly no" in log, "the dispatcher warns before it sends anything"
    assert "restarted without an append-only file" in log
    lost = fleet.rows("select error from case_results where status = 'lost'")
    assert lost, log
    assert all("lost with the broker" in error for (error,) in lost)
    assert "worker stopped" not in log


def test_the_embedded_broker_killed_mid_run_is_restarted_and_loses_nothing(farm: Farm) -> None:
    run = _slow(farm).start("run", "--engine", SLOW, "--dimension", "temporal", "--label", "kill",
                     "--out", str(farm.tmp / "out" / "kill"), "--workers", "2")  # fmt: skip
    wait_for(farm.has_results, 60, "a first result")
    (server,) = [p for p in children(run.pid) if b"redis-server" in proc_file(p, "cmdline")]
    os.kill(server, signal.SIGKILL)
    assert run.wait(90) == 0, (farm.tmp / "run.log").read_text()
    log = (farm.tmp / "run.log").read_text()
    assert "restarted it" in log
    (planned,) = farm.rows("select planned_count from runs")[0]
    statuses = _statuses(farm)
    assert len(statuses) == planned and set(statuses.values()) == {"done"}
