"""An engine behind `--rate engine=...` is the same engine to its callers: the methods keep
their signatures, and the time spent queued at the limiter is not the engine's latency."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from memeval.engines.base import Engine, takes_question
from memeval.engines.types import Capability, Pack
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


def test_a_throttled_engine_keeps_its_signatures_and_its_latency(redis_url, tag):
    async def go() -> tuple[bool, str, list[float], float]:
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
        return (
            takes_question(engine.start_session),
            packs[-1].markdown,
            [t.ms for t in watch.timings],
            elapsed,
        )

    kept, markdown, timings, elapsed = asyncio.run(go())
    assert kept and markdown.endswith("- q")
    assert elapsed >= 0.9  # three calls at 2/s with a burst of 1 queue for about a second
    assert max(timings) < 200, timings  # ...and none of that queueing is the engine's latency
