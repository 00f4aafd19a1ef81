"""An engine behind `--rate engine=...` is the same engine to its callers: its calls take the
same arguments (the question included), and the time spent queued at the limiter is not the
engine's latency."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from memeval.engines.base import Engine
from memeval.engines.types import Capability, Pack, Turn
from memeval.llm.rates import parse_rate
from memeval.runner.throttle import throttle_engine
from memeval.stopwatch import Stopwatch
from memeval_farm.budget import connect_redis
from memeval_farm.limiter import Limiter


class Asks(Engine):
    name = "asks"
    capabilities = frozenset({Capability.lifecycle})

    async def start_session(self, tenant, agent, thread, focus, at, question=None) -> Pack:
        return Pack(markdown=f"# asked\n- {question}")


def test_a_throttled_engine_keeps_its_arguments_and_its_latency(redis_url, tag):
    async def go() -> tuple[str, list[float], float]:
        redis = await connect_redis(redis_url)
        asks = Asks()
        asks.name = f"asks-{tag}"  # the limiter's key, so this test's keys are its own
        engine = throttle_engine(asks, Limiter(redis), parse_rate("engine=2/s+1"))
        watch = Stopwatch()
        at = datetime.now(UTC)
        loop = asyncio.get_running_loop()
        start = loop.time()
        packs = [
            await watch.time(
                "start_session", engine.start_session("t", "a", None, None, at, question="q")
            )
            for _ in range(3)
        ]
        elapsed = loop.time() - start
        await redis.aclose()
        return packs[-1].markdown, [t.ms for t in watch.timings], elapsed

    markdown, timings, elapsed = asyncio.run(go())
    assert markdown.endswith("- q")  # the question reached the engine through the view
    assert elapsed >= 0.9  # three calls at 2/s with a burst of 1 queue for about a second
    assert max(timings) < 200, timings  # ...and none of that queueing is the engine's latency


class Logs(Engine):
    """Counts its `post_turn` calls; its history is the default one, a call per turn."""

    name = "logs"
    capabilities = frozenset({Capability.lifecycle})

    def __init__(self) -> None:
        self.at: list[float] = []

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        self.at.append(asyncio.get_running_loop().time())
        return f"t{len(self.at)}"


class Bulk(Logs):
    """A bulk path of its own: one call to its service for the whole history."""

    async def write_history(self, tenant, agent, thread, turns) -> list[str]:
        self.at.append(asyncio.get_running_loop().time())
        return [f"t{n}" for n, _ in enumerate(turns)]


def test_a_history_written_turn_by_turn_passes_the_limiter_once_per_turn(redis_url, tag):
    """A bulk-loaded history (LoCoMo's sessions) used to reach the engine around the limiter:
    `write_history` was not throttled and its default called the engine's own `post_turn`."""
    now = datetime.now(UTC)
    turns = [Turn(role="user", speaker="Ana", text=f"line {n}", at=now) for n in range(6)]

    async def go(engine: Logs) -> tuple[list[str], float]:
        redis = await connect_redis(redis_url)
        engine.name = f"{engine.name}-{tag}"
        throttled = throttle_engine(engine, Limiter(redis), parse_rate("engine=10/s+1"))
        start = asyncio.get_running_loop().time()
        ids = await throttled.write_history("t", "a", "th", turns)
        await redis.aclose()
        return ids, asyncio.get_running_loop().time() - start

    per_turn = Logs()
    ids, took = asyncio.run(go(per_turn))
    assert ids == [f"t{n}" for n in range(1, 7)]
    assert len(per_turn.at) == 6
    assert took >= 0.45  # six admissions at 10/s with a burst of one: five waits of 0.1 s
    bulk = Bulk()
    ids, took = asyncio.run(go(bulk))
    assert len(ids) == 6 and len(bulk.at) == 1  # one call, one admission
    assert took < 0.45
