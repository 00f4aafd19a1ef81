"""Global limiter under contention: worker processes hammer one key through Redis.

Prints, per configured rate, the achieved admission rate and the worst one-second window (which
must stay within rate + burst), then the raw decision throughput of the Lua script, then what a
model service sees: answerers that first wait on a full budget, measured by the arrival times
in the fake service's log (their slots are taken right before sending, so the wait cannot pile
them up at the service's door).

    python benchmarks/limiter_throughput.py [--processes 4] [--seconds 5] [--redis-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import multiprocessing
import os
import time
import uuid
from decimal import Decimal

import redis as sync_redis

from memeval.llm.pricing import Price
from memeval.llm.prompt import messages
from memeval.llm.rates import parse_rate
from memeval.llm.spec import LlmSpec
from memeval_farm.budget import Budget, connect_redis
from memeval_farm.limiter import Limiter
from memeval_farm.redis_state import open_answerer
from tests.llm.server import KEY, FakeOpenRouter, busiest_window


def hammer(redis_url: str, spec: str, key: str, start_at: float, seconds: float) -> list[float]:
    async def go() -> list[float]:
        redis = await connect_redis(redis_url)
        limiter = Limiter(redis, prefix=f"memeval-bench:{key}:")
        rate = parse_rate(spec)
        await asyncio.sleep(max(0.0, start_at - time.time()))
        grants: list[float] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            grants.append(await limiter.acquire(rate, "bench"))
        await redis.aclose()
        return grants

    return asyncio.run(go())


def decisions(redis_url: str, key: str, seconds: float) -> int:
    """try_acquire as fast as one process can: the script's cost, not the rate, is the limit."""

    async def go() -> int:
        redis = await connect_redis(redis_url)
        limiter = Limiter(redis, prefix=f"memeval-bench:{key}:")
        rate = parse_rate("engine=1000000/s")
        count = 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await limiter.try_acquire(rate, "raw")
            count += 1
        await redis.aclose()
        return count

    return asyncio.run(go())


async def at_the_service(redis_url: str, key: str, callers: int) -> int:
    """`callers` answers queue on a budget whose room is held for 1.5 s, then all may go."""
    os.environ["OPENROUTER_API_KEY"] = KEY
    model, scope = f"openai/gpt-4.1-mini-{key}", f"bench-{key}-{callers}"
    price = Price(prompt=Decimal(1) / 1_000_000, completion=Decimal(4) / 1_000_000)
    with FakeOpenRouter(prices={model: (1, 4)}) as server:
        spec = LlmSpec(
            model=model,
            base_url=server.base_url,
            price=price,
            budget_scopes=[scope],
            rates=[parse_rate("model=20/s+2")],
        )
        chat = ("Which port does the billing service listen on?", "- The port is 8443.")
        redis = await connect_redis(redis_url)
        budget = Budget(redis, [scope])
        cap = 1000 * spec.hold_micros(messages(*chat))
        await budget.open(scope, cap)
        blocker = await budget.reserve(cap)
        assert blocker is not None
        async with open_answerer(spec, redis_url=redis_url) as answerer:
            work = asyncio.gather(*(answerer.answer(*chat) for _ in range(callers)))
            await asyncio.sleep(1.5)
            await budget.release(blocker)
            await work
        for name in [k async for k in redis.scan_iter(match=f"*{key}*")]:
            await redis.delete(name)
        await redis.aclose()
        return busiest_window(server.arrivals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--rates", default="engine=20/s,engine=100/s,engine=100/s+1,model=600/m")
    args = parser.parse_args()
    key = uuid.uuid4().hex[:8]
    context = multiprocessing.get_context("spawn")
    print(f"{args.processes} processes, {args.seconds:g}s per rate")
    print(f"{'rate':>18} {'burst':>5} {'achieved/s':>10} {'of rate':>8} {'worst 1s':>8} {'cap':>5}")
    try:
        for spec in args.rates.split(","):
            rate = parse_rate(spec)
            start_at = time.time() + 2.0
            with context.Pool(args.processes) as pool:
                shares = pool.starmap(
                    hammer,
                    [(args.redis_url, spec, f"{key}-{spec}", start_at, args.seconds)]
                    * args.processes,
                )
            grants = sorted(g for s in shares for g in s)
            worst = max(bisect.bisect_left(grants, t + 1.0) - i for i, t in enumerate(grants))
            steady = [g for g in grants if g >= grants[0] + 0.5]
            achieved = (len(steady) - 1) / (steady[-1] - steady[0])
            print(
                f"{spec:>18} {rate.burst:>5} {achieved:>10.2f} {achieved / rate.per_second:>8.1%}"
                f" {worst:>8} {rate.per_second + rate.burst:>5g}"
            )
        with context.Pool(args.processes) as pool:
            counts = pool.starmap(decisions, [(args.redis_url, key, 2.0)] * args.processes)
        print(f"raw decisions: {sum(counts) / 2.0:,.0f}/s over {args.processes} processes")
        for callers in (40, 80):
            worst = asyncio.run(at_the_service(args.redis_url, key, callers))
            print(f"at the service, model=20/s+2, {callers} callers after a 1.5 s budget wait: "
                  f"worst 1 s window {worst} (R + burst = 22)")  # fmt: skip
    finally:
        client = sync_redis.Redis.from_url(args.redis_url)
        for name in client.scan_iter(match=f"memeval-bench:{key}*"):
            client.delete(name)
        client.close()


if __name__ == "__main__":
    main()
