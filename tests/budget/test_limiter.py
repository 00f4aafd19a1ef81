"""The global limiter: parsing `--rate`, GCRA across processes, 429 feedback, engine throttling.

Timing assertions use the grant times Redis itself reports, so a loaded test machine that
wakes a worker late can only lower the rate, never make the limiter look leaky.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import multiprocessing
import time
from typing import Any

import pytest
from redis.asyncio import Redis

from memeval.errors import UsageError
from memeval.llm.rates import Rate, RateKind, parse_rate, parse_rates
from memeval.runner.throttle import ADMITTED, throttle_engine
from memeval_farm.budget import connect_redis
from memeval_farm.limiter import Limiter
from memeval_farm.redis_state import limited_engine
from tests.llm.fakes import WordEngine

RATE = 20
PROCESSES = 4
RUN_S = 4.0


@pytest.mark.parametrize(
    ("text", "count", "period", "burst"),
    [
        ("engine=20/s", 20, 1.0, 2),
        ("model=60/m", 60, 60.0, 1),
        ("model = 600/h", 600, 3600.0, 1),
        ("engine=100/s+3", 100, 1.0, 3),
        ("engine=1/s", 1, 1.0, 1),
    ],
)
def test_parse_rate(text, count, period, burst):
    rate = parse_rate(text)
    assert (rate.count, rate.period_s, rate.burst) == (count, period, burst)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("engine=20", "cannot read rate"),
        ("engine=20/d", "unknown unit"),
        ("tenant=5/s", "unknown kind"),
        ("engine=0/s", "admits nothing"),
        ("engine=5/s+0", "zero burst"),
        ("engine=-5/s", "cannot read rate"),
        ("20/s", "cannot read rate"),
    ],
)
def test_bad_rates_are_usage_errors(text, message):
    with pytest.raises(UsageError, match=message) as caught:
        parse_rate(text)
    assert caught.value.exit_code == 2 and caught.value.fix


def test_one_limit_per_kind():
    assert [r.kind for r in parse_rates(["engine=20/s", "model=60/m"])] == [
        RateKind.engine,
        RateKind.model,
    ]
    with pytest.raises(UsageError, match="given twice"):
        parse_rates(["model=60/m", "model=5/s"])


def hammer(redis_url: str, name: str, start_at: float) -> list[float]:
    """One worker process acquiring as fast as it is let through, for RUN_S seconds."""

    async def go() -> list[float]:
        redis = await connect_redis(redis_url)
        limiter = Limiter(redis)
        rate = parse_rate(f"engine={RATE}/s")
        await asyncio.sleep(max(0.0, start_at - time.time()))
        grants: list[float] = []
        deadline = time.monotonic() + RUN_S
        while time.monotonic() < deadline:
            grants.append(await limiter.acquire(rate, name))
        await redis.aclose()
        return grants

    return asyncio.run(go())


def test_limit_holds_across_processes_and_is_reached(redis_url, tag):
    rate = parse_rate(f"engine={RATE}/s")
    context = multiprocessing.get_context("spawn")
    start_at = time.time() + 2.0  # every process is up before anyone asks
    with context.Pool(PROCESSES) as pool:
        shares = pool.starmap(hammer, [(redis_url, f"eng-{tag}", start_at)] * PROCESSES)
    grants = sorted(g for share in shares for g in share)
    assert all(share for share in shares), "a worker process never got through"

    worst = max(bisect.bisect_left(grants, t + 1.0) - i for i, t in enumerate(grants))
    assert worst <= RATE + rate.burst, f"{worst} admissions in one second at {RATE}/s"

    # Sustained: skip the first half second (the burst), measure the rest of the run.
    steady = [g for g in grants if g >= grants[0] + 0.5]
    achieved = (len(steady) - 1) / (steady[-1] - steady[0])
    assert achieved >= 0.95 * RATE, f"only {achieved:.1f}/s of {RATE}/s"


def test_a_429_pauses_everyone_for_retry_after(redis_url, tag):
    async def go():
        redis = await connect_redis(redis_url)
        limiter = Limiter(redis)
        # 5/s: the next slot after a pause is 200 ms away, room enough for a busy machine (at
        # 50/s a 20 ms stall between the two calls below let the second one through).
        rate = Rate(kind=RateKind.model, count=5, period_s=1.0, burst=5)
        name = f"model-{tag}"
        first = await limiter.acquire(rate, name)
        await limiter.pause(rate, name, 0.5)
        await limiter.pause(rate, name, 0.1)  # a shorter, later pause does not shorten it
        after = await limiter.acquire(rate, name)
        assert after - first >= 0.49
        allowed, wait_s, _ = await limiter.try_acquire(rate, name)
        assert not allowed and wait_s > 0  # the burst restarts empty after a pause
        await redis.aclose()

    asyncio.run(go())


class CountingRedis(Redis):
    """The real Redis, every command counted on the way."""

    commands = 0

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        self.commands += 1
        return await super().execute_command(*args, **options)


def test_a_crowd_queues_for_slots_instead_of_asking_again_for_each(redis_url, tag):
    """Waiters told to ask again all woke for every freed slot: each admission cost Redis
    a call from every waiter still in the crowd."""
    crowd = 40

    async def go() -> tuple[list[float], int]:
        redis = CountingRedis.from_url(redis_url)
        limiter = Limiter(redis)
        rate = Rate(kind=RateKind.engine, count=100, period_s=1.0, burst=1)
        asking = (limiter.acquire(rate, f"crowd-{tag}") for _ in range(crowd))
        grants = await asyncio.gather(*asking)
        await redis.aclose()
        return sorted(grants), redis.commands

    grants, commands = asyncio.run(go())
    gaps = [later - earlier for earlier, later in itertools.pairwise(grants)]
    assert min(gaps) >= 0.01 - 1e-6, "two callers were given slots closer than the rate allows"
    # One reservation each, and one look at the pause count by each caller that waited.
    assert commands <= 2 * crowd + 5, f"{commands} Redis commands for {crowd} admissions"


def test_a_pause_while_a_caller_waits_for_its_slot_moves_it_past_the_pause(redis_url, tag):
    async def go() -> tuple[float, float]:
        redis = await connect_redis(redis_url)
        limiter = Limiter(redis)
        rate = Rate(kind=RateKind.engine, count=5, period_s=1.0, burst=1)
        name = f"paused-{tag}"
        first = await limiter.acquire(rate, name)
        waiting = asyncio.create_task(limiter.acquire(rate, name))  # its slot: 200 ms on
        await asyncio.sleep(0.05)
        await limiter.pause(rate, name, 0.5)
        granted = await waiting
        await redis.aclose()
        return first, granted

    first, granted = asyncio.run(go())
    assert granted - first >= 0.5, f"granted {granted - first:.3f} s after, inside the pause"


def test_throttled_engine_passes_calls_through_the_limiter(redis_url, tag):
    async def go():
        redis = await connect_redis(redis_url)
        engine = WordEngine()
        engine.name = f"words-{tag}"
        rate = Rate(kind=RateKind.engine, count=10, period_s=1.0, burst=1)
        limited = throttle_engine(engine, Limiter(redis), rate)
        assert throttle_engine(engine, Limiter(redis), None) is engine
        assert limited.name == engine.name and limited.capabilities == engine.capabilities
        started = time.monotonic()
        for _ in range(5):
            await limited.query("t", "anything")
        elapsed = time.monotonic() - started
        assert elapsed >= 0.35 and engine.calls["query"] == 5
        await redis.aclose()

    asyncio.run(go())


def test_limited_engine_is_what_a_farm_task_wraps(redis_url, tag):
    async def go():
        engine = WordEngine()
        engine.name = f"words-{tag}"
        async with limited_engine(engine, parse_rates(["model=5/s"]), redis_url) as same:
            assert same is engine  # no engine rate: nothing in the way
        async with limited_engine(engine, parse_rates(["engine=10/s+1"]), redis_url) as slow:
            started = time.monotonic()
            for _ in range(3):
                await slow.query("t", "anything")
            assert time.monotonic() - started >= 0.15 and engine.calls["query"] == 3

    asyncio.run(go())


def test_an_admitted_call_can_read_when_the_limiter_let_it_through(redis_url, tag):
    """What the latency benchmark judges the rate by: admissions, on the limiter's clock, one
    per call and spaced by the rate once the burst is spent; none outside a limited call."""

    class Stamped(WordEngine):
        def __init__(self) -> None:
            super().__init__()
            self.stamps: list[float | None] = []

        async def query(self, tenant, text, k=5):
            self.stamps.append(ADMITTED.get())
            return await super().query(tenant, text, k)

    async def go():
        redis = await connect_redis(redis_url)
        engine = Stamped()
        engine.name = f"stamped-{tag}"
        limited = throttle_engine(engine, Limiter(redis), parse_rate("engine=20/s+1"))
        for _ in range(3):
            await limited.query("t", "anything")
        await engine.query("t", "anything")  # the engine itself: no limiter, no admission
        await redis.aclose()
        return engine.stamps

    first, second, third, unlimited = asyncio.run(go())
    assert first is not None and second is not None and third is not None
    assert second - first >= 0.045 and third - second >= 0.045  # 20/s: one each 50 ms
    assert unlimited is None and ADMITTED.get() is None
