"""Inside an engine call, where the runner scores whatever the engine raises, a Redis fault of
the farm (here a real Redis paused past the client's timeout) must reach the task as
infrastructure, not become the probe's failure."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio
from redis.backoff import NoBackoff
from redis.retry import Retry

from memeval.engines.reference import ReferenceEngine
from memeval.engines.types import Pack
from memeval.errors import EngineUnavailable
from memeval.results import CheckStatus
from memeval.runner import run_case
from memeval.suites.catalog import fixtures_root
from memeval.suites.loader import load_paths
from memeval_farm.shield import FarmUnavailable, shield
from tests.infra.conftest import PrivateRedis

PAUSE_MS = 3000
TIMEOUT_S = 0.3


class Tethered(ReferenceEngine):
    """Asks the farm's Redis before every session pack, as a throttled engine asks the limiter."""

    name = "tethered"

    def __init__(self, client: redis.asyncio.Redis) -> None:
        super().__init__()
        self.client = client

    async def start_session(self, *args: object, **kwargs: object) -> Pack:
        await self.client.get("memeval:test:tether")
        return await super().start_session(*args, **kwargs)  # type: ignore[arg-type]


def _scenario():
    return load_paths([fixtures_root() / "lifecycle" / "restart_recall.yaml"])[0].case


async def _run(server: PrivateRedis, *, shielded: bool):
    # No client-side retries: the fault surfaces at the first timeout instead of after
    # redis-py's own retries, the same exception either way.
    client = redis.asyncio.Redis(
        port=server.port, socket_timeout=TIMEOUT_S, retry=Retry(NoBackoff(), 0)
    )
    engine = Tethered(client)
    pauser = redis.Redis(port=server.port)
    pauser.execute_command("CLIENT", "PAUSE", PAUSE_MS, "ALL")
    pauser.close()
    try:
        return await run_case(_scenario(), shield(engine) if shielded else engine, run_id="shield")
    finally:
        await client.aclose()
        await engine.close()


def test_a_redis_timeout_in_a_probe_is_scored_without_the_shield(
    private_redis: PrivateRedis,
) -> None:
    result = asyncio.run(_run(private_redis, shielded=False))
    errors = [p.error or "" for p in result.probes if p.status is CheckStatus.error]
    assert any("TimeoutError" in e for e in errors), "the fault is scored: what the shield stops"


def test_the_shield_turns_it_into_infrastructure(private_redis: PrivateRedis) -> None:
    with pytest.raises(FarmUnavailable) as raised:
        asyncio.run(_run(private_redis, shielded=True))
    assert isinstance(raised.value, EngineUnavailable)
    assert "start_session" in str(raised.value)
