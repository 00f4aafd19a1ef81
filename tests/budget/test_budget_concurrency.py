"""200 paid calls from four worker processes against one budget: real HTTP, real Redis.

Spend must never pass the cap (not at the end, not at any moment in between), and once the cap
binds, at least 90% of it must have been used: a budget that refuses early wastes the money
the user set aside.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading

import redis as sync_redis

from memeval.llm.pricing import Price
from memeval.llm.spec import LlmSpec
from memeval_farm.budget import Budget, connect_redis
from memeval_farm.redis_state import open_answerer

PROCESSES = 4
CALLS_PER_PROCESS = 50
IN_FLIGHT_PER_PROCESS = 5
QUESTION = "Which port does the billing service listen on?"
PACK = "# Memory\n\n## Documents\n" + "".join(
    f"- Service {i} of the fleet listens on port {8000 + i} behind the gateway.\n"
    for i in range(14)
)


def spend_calls(spec_json: str, redis_url: str) -> list[tuple[bool, int]]:
    """One worker process: its share of the calls, several at a time."""

    async def go() -> list[tuple[bool, int]]:
        spec = LlmSpec.model_validate_json(spec_json)
        gate = asyncio.Semaphore(IN_FLIGHT_PER_PROCESS)
        async with open_answerer(spec, redis_url=redis_url) as answerer:

            async def one() -> tuple[bool, int]:
                async with gate:
                    reply = await answerer.answer(QUESTION, PACK)
                    assert reply.error is None, reply.error
                    return reply.skipped_budget, reply.usd_micros

            return list(await asyncio.gather(*(one() for _ in range(CALLS_PER_PROCESS))))

    return asyncio.run(go())


def test_concurrent_spend_stays_under_the_cap_and_uses_it(server, redis_url, tag):
    server.delay = 0.01
    scope = f"sweep:{tag}"
    spec = LlmSpec(
        model="test/cheap",
        base_url=server.base_url,
        max_tokens=16,
        price=Price(prompt=1 / 1_000_000, completion=2 / 1_000_000),  # as the server bills
        budget_scopes=[scope],
    )
    # About 150 of the 200 calls fit, so the cap binds.
    probe_cost = 0

    async def one_call_cost() -> int:
        async with open_answerer(spec.model_copy(update={"budget_scopes": []})) as answerer:
            return (await answerer.answer(QUESTION, PACK)).usd_micros

    probe_cost = asyncio.run(one_call_cost())
    cap = probe_cost * 150
    billed_before = server.billed_micros

    async def open_budget():
        redis = await connect_redis(redis_url)
        await Budget(redis, [scope]).open(scope, cap)
        await redis.aclose()

    asyncio.run(open_budget())

    watcher = sync_redis.Redis.from_url(redis_url)
    breaches: list[tuple[int, int]] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            spent, reserved = watcher.hmget(f"memeval:budget:{scope}", "spent", "reserved")
            spent, reserved = int(spent or 0), int(reserved or 0)
            if spent > cap or spent + reserved > cap:
                breaches.append((spent, reserved))
            stop.wait(0.002)

    sampler = threading.Thread(target=watch, daemon=True)
    sampler.start()
    context = multiprocessing.get_context("spawn")
    with context.Pool(PROCESSES) as pool:
        shares = pool.starmap(
            spend_calls, [(spec.model_dump_json(), redis_url)] * PROCESSES, chunksize=1
        )
    stop.set()
    sampler.join()
    watcher.close()

    outcomes = [o for share in shares for o in share]
    skipped = sum(s for s, _ in outcomes)
    paid = [usd for s, usd in outcomes if not s]

    async def final_state():
        redis = await connect_redis(redis_url)
        state = await Budget(redis, [scope]).state(scope)
        await redis.aclose()
        return state

    state = asyncio.run(final_state())
    billed = server.billed_micros - billed_before
    assert len(outcomes) == PROCESSES * CALLS_PER_PROCESS
    assert skipped > 0, "the cap never bound; the test proves nothing"
    assert not breaches, f"spend passed the cap while running: {breaches[:3]} (cap {cap})"
    assert state.spent_micros <= cap and billed <= cap
    assert state.spent_micros == billed == sum(paid), "settled spend must be the true cost"
    assert state.reserved_micros == 0 and state.calls == len(paid)
    assert state.spent_micros >= 0.9 * cap, f"only {state.spent_micros / cap:.1%} of the cap used"
    assert state.closed == "exhausted"
