"""A Redis call that times out inside a case (the shared rate limiter, on the farm's Redis) is the
farm's fault: the case is retried on a fresh tenant, never scored or stored as an error."""

from __future__ import annotations

import redis

from tests.farm.conftest import Farm, wait_for
from tests.farm.engines import SLOW
from tests.infra.conftest import PrivateRedis, wait_ready, worker

PAUSE_MS = 6500  # past redis-py's 5 s socket timeout


def test_a_redis_timeout_inside_a_case_retries_the_case(
    fleet: Farm, private_redis: PrivateRedis
) -> None:
    fleet.env.update(MEMEVAL_TEST_DELAY="0.3", MEMEVAL_RETRY_BACKOFF="0.2")
    with worker(fleet):
        wait_ready(fleet)
        run = fleet.start("run", "--engine", SLOW, "--only", "cfo_on_date",
                          "--rate", "engine=1000/s", "--label", "paused",
                          "--out", str(fleet.tmp / "out" / "paused"))  # fmt: skip
        wait_for(lambda: any(fleet.marks.iterdir()), 60, "the case's first write")
        client = redis.Redis(host="127.0.0.1", port=private_redis.port)
        client.execute_command("CLIENT", "PAUSE", PAUSE_MS, "ALL")
        client.close()
        assert run.wait(90) == 0, (fleet.tmp / "run.log").read_text()
    ((status, error, attempt),) = fleet.rows(
        "select status, error, payload->>'attempt' from case_results"
    )
    assert status == "done" and error is None
    assert int(attempt) >= 1, "the case ran again after the timeout"
    tenants = {mark.name.split("-", 2)[2] for mark in fleet.marks.iterdir()}
    assert len(tenants) >= 2, "the retry ran on a fresh tenant"
