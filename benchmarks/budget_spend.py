"""The budget under concurrency: worker processes make simulated paid calls against one cap.

Each call holds its worst case, "runs" for a few milliseconds, then settles a true cost between
20% and 100% of the hold, as real calls do (completions rarely use all of `max_tokens`). Prints
the spend against the cap (never above it, and close to it once it binds), the calls made and
refused, and the reserve+settle throughput.

    python benchmarks/budget_spend.py [--processes 4] [--calls 500] [--in-flight 8]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import time
import uuid

import redis as sync_redis

from workers.budget import Budget, connect_redis

HOLD = 1_000  # micro-USD: a call's worst case


def worker(redis_url: str, scope: str, calls: int, in_flight: int, seed: int) -> tuple[int, int]:
    async def go() -> tuple[int, int]:
        rng = random.Random(seed)
        redis = await connect_redis(redis_url)
        budget = Budget(redis, [scope], prefix="memeval-bench:")
        gate = asyncio.Semaphore(in_flight)
        made = refused = 0

        async def one() -> None:
            nonlocal made, refused
            async with gate:
                hold = await budget.reserve(HOLD)
                if hold is None:
                    refused += 1
                    return
                await asyncio.sleep(rng.uniform(0.002, 0.01))
                await budget.settle(hold, rng.randint(HOLD // 5, HOLD))
                made += 1

        await asyncio.gather(*(one() for _ in range(calls)))
        await redis.aclose()
        return made, refused

    return asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--calls", type=int, default=500, help="Per process.")
    parser.add_argument("--in-flight", type=int, default=8, help="Per process.")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")
    total = args.processes * args.calls
    print(f"{args.processes} processes x {args.calls} calls, {args.in_flight} in flight each")
    print(f"{'cap $':>8} {'spent $':>9} {'of cap':>7} {'calls':>6} {'refused':>7} {'ops/s':>7}")
    client = sync_redis.Redis.from_url(args.redis_url)
    try:
        for share in (0.25, 0.5, 0.75, 2.0):  # 2.0: the cap never binds
            cap = int(total * HOLD * 0.6 * share)
            scope = f"bench-{uuid.uuid4().hex[:8]}"

            async def open_scope(scope: str = scope, cap: int = cap) -> None:
                redis = await connect_redis(args.redis_url)
                await Budget(redis, [scope], prefix="memeval-bench:").open(scope, cap)
                await redis.aclose()

            asyncio.run(open_scope())
            started = time.perf_counter()
            with context.Pool(args.processes) as pool:
                results = pool.starmap(
                    worker,
                    [
                        (args.redis_url, scope, args.calls, args.in_flight, seed)
                        for seed in range(args.processes)
                    ],
                )
            elapsed = time.perf_counter() - started
            spent = int(client.hget(f"memeval-bench:budget:{scope}", "spent") or 0)
            made = sum(m for m, _ in results)
            refused = sum(r for _, r in results)
            assert spent <= cap, f"spend {spent} passed the cap {cap}"
            print(
                f"{cap / 1e6:>8.3f} {spent / 1e6:>9.4f} {spent / cap:>7.1%} {made:>6} {refused:>7}"
                f" {2 * made / elapsed:>7,.0f}"
            )
    finally:
        for name in client.scan_iter(match="memeval-bench:*"):
            client.delete(name)
        client.close()


if __name__ == "__main__":
    main()
