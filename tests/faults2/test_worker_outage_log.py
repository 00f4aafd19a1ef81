"""A long broker outage in a worker's log: one clear line per condition, no Python tracebacks.
Before, a 20 s outage left two ERROR tracebacks there (Celery's consumer, losing its
connection), for a condition the worker rides out on its own."""

from __future__ import annotations

import re
import time

from tests.farm.conftest import Farm, wait_for
from tests.farm.engines import SLOW
from tests.infra.conftest import PrivateRedis, fleet, private_redis, wait_ready, worker

__all__ = ["fleet", "private_redis"]

OUTAGE_S = 20.0


def test_a_long_outage_leaves_clear_lines_and_no_traceback_in_the_worker_log(
    fleet: Farm, private_redis: PrivateRedis
) -> None:
    fleet.env["MEMEVAL_TEST_DELAY"] = "0.3"  # the Slow engine: still running when Redis goes
    with worker(fleet):
        wait_ready(fleet)
        run = fleet.start("run", "--engine", SLOW, "--dimension", "temporal", "--label", "long",
                          "--out", str(fleet.tmp / "out"))  # fmt: skip
        wait_for(fleet.has_results, 60, "a first result")
        private_redis.stop()
        time.sleep(OUTAGE_S)
        private_redis.start()  # the same append-only file: the queue comes back
        assert run.wait(120) == 0, (fleet.tmp / "run.log").read_text()
    log = (fleet.tmp / "worker.log").read_text()
    assert "Traceback" not in log, log
    said = [ln for ln in log.splitlines() if "the broker or result store is unreachable" in ln]
    assert any("Connection to broker lost" in ln for ln in said), log
    assert any("Cannot connect to" in ln for ln in said), log
    # Once per process and condition in a 20 s outage, whatever the retry counts.
    where = [re.match(r"^\[[^\]]*?: (\S+)\] (.*)$", ln) for ln in said]  # LEVEL/Process, text
    conditions = [(m[1], re.sub(r"[\d.]+", "#", m[2])) for m in where if m]
    assert len(conditions) == len(said) and len(set(conditions)) == len(said), "\n".join(said)
    assert "In Celery 5.1 we introduced" not in log
    (planned,) = fleet.rows("select planned_count from runs")[0]
    statuses = dict(fleet.rows("select case_id, status from case_results"))
    assert len(statuses) == planned and set(statuses.values()) == {"done"}
