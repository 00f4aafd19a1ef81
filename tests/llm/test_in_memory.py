"""The in-memory shared state keeps the Redis one's rules, so an in-process run without Redis
spends and paces as a farm run would: the same script of holds gives the same answers from
both, and an answerer on it stops at its budget."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from memeval.llm.answer import open_answerer
from memeval.llm.in_memory import MemoryState
from memeval.llm.prompt import messages
from memeval.llm.rates import MAX_PAUSE_S, parse_rate
from memeval.llm.shared import SharedState
from memeval_farm.redis_state import redis_state
from tests.llm.test_answer import PACK, QUESTION, spec

Script = Callable[[SharedState, str], Awaitable[list[object]]]


@asynccontextmanager
async def state_of(kind: str, redis_url: str) -> AsyncIterator[SharedState]:
    if kind == "memory":
        yield MemoryState()
        return
    opener = redis_state(redis_url)
    assert opener is not None
    async with opener() as state:
        yield state


async def holds_script(state: SharedState, scope: str) -> list[object]:
    budget = state.budget([scope])
    seen: list[object] = [(await budget.open(scope, 1000)).cap_micros]
    probe = await budget.reserve(100)
    assert probe is not None
    seen.append(await budget.reserve(1, max_wait_s=0.05))  # the first call settles alone
    seen.append(await budget.settle(probe, 0))
    first = await budget.reserve(400)
    second = await budget.reserve(400)
    seen.append(await budget.reserve(400, max_wait_s=0.05))  # in-flight holds fill the room
    assert first is not None and second is not None
    seen += [first.amount_micros, second.amount_micros]
    seen.append(await budget.settle(first, 300, completion_tokens=30))
    await budget.release(second)
    tail = await budget.reserve(900, min_micros=100)  # only 700 left: the tail is handed out
    assert tail is not None
    seen.append(tail.amount_micros)
    seen.append(await budget.settle(tail, 750, completion_tokens=70))  # billed above its hold
    after = await budget.state(scope)
    seen += [after.spent_micros, after.reserved_micros, after.calls, after.closed]
    seen += [after.overbilled_micros, after.overbilled_calls, await budget.closed()]
    seen.append(await budget.reserve(1))  # closed: refused
    seen.append(await budget.completion_tokens(0.95, least=2))
    seen.append(await budget.completion_tokens(0.95, least=3))
    reopened = await budget.open(scope, 5000, spent_micros=2000, raise_cap=True)
    seen += [reopened.cap_micros, reopened.spent_micros, reopened.closed]  # overbilled stays
    return seen


async def exhaust_script(state: SharedState, scope: str) -> list[object]:
    budget = state.budget([scope])
    await budget.open(scope, 500)
    hold = await budget.reserve(500)
    assert hold is not None
    await budget.settle(hold, 450)
    seen: list[object] = [await budget.reserve(100)]  # 50 left, nothing in flight: closes
    seen.append((await budget.state(scope)).closed)
    raised = await budget.open(scope, 1000, raise_cap=True)  # a larger budget on resume
    seen += [raised.closed, raised.spent_micros]
    again = await budget.reserve(100)
    seen.append(None if again is None else again.amount_micros)
    with pytest.raises(LookupError, match="never opened"):
        await state.budget([f"{scope}-other"]).state(f"{scope}-other")
    return seen


@pytest.mark.parametrize("script", [holds_script, exhaust_script])
def test_memory_and_redis_budgets_agree(script: Script, redis_url: str, tag: str) -> None:
    async def both() -> tuple[list[object], list[object]]:
        async with state_of("redis", redis_url) as redis:
            on_redis = await script(redis, f"run:{tag}")
        async with state_of("memory", redis_url) as memory:
            in_memory = await script(memory, f"run:{tag}")
        return on_redis, in_memory

    on_redis, in_memory = asyncio.run(both())
    assert in_memory == on_redis
    assert len(on_redis) >= 5  # the script ran to its end


def test_the_memory_limiter_paces_and_backs_off() -> None:
    rate = parse_rate("engine=20/s+1")
    limiter = MemoryState().limiter()

    async def go() -> tuple[float, float, float]:
        start = time.monotonic()
        for _ in range(6):
            await limiter.acquire(rate, "e")
        paced = time.monotonic() - start
        held = await limiter.pause(rate, "e", 0.3)
        start = time.monotonic()
        await limiter.acquire(rate, "e")
        return paced, held, time.monotonic() - start

    paced, held, waited = asyncio.run(go())
    assert 0.24 <= paced < 1.0  # five intervals of 50 ms after the first admission
    assert held == pytest.approx(0.3, abs=0.02) and waited >= 0.28
    capped = asyncio.run(limiter.pause(rate, "other", 86_400))
    assert capped <= MAX_PAUSE_S


def test_the_memory_limiter_queues_a_crowd_and_honours_a_pause_it_sleeps_through() -> None:
    rate = parse_rate("engine=20/s+1")
    limiter = MemoryState().limiter()

    async def go() -> tuple[list[float], float, float]:
        crowd = sorted(await asyncio.gather(*(limiter.acquire(rate, "c") for _ in range(8))))
        first = await limiter.acquire(rate, "p")
        waiting = asyncio.create_task(limiter.acquire(rate, "p"))  # its slot: 50 ms on
        await asyncio.sleep(0.01)
        await limiter.pause(rate, "p", 0.3)
        return crowd, first, await waiting

    crowd, first, granted = asyncio.run(go())
    assert min(b - a for a, b in itertools.pairwise(crowd)) >= 0.05 - 1e-6
    assert granted - first >= 0.3


def test_an_answerer_on_memory_stops_at_its_budget(server) -> None:
    state = MemoryState()
    scope = "run:memory"
    the_spec = spec(server, budget_scopes=[scope])

    async def go() -> list[bool]:
        await state.budget([scope]).open(scope, 3 * the_spec.hold_micros(messages(QUESTION, PACK)))
        async with open_answerer(the_spec, shared=state.opener()) as answerer:
            return [(await answerer.answer(QUESTION, PACK)).skipped_budget for _ in range(40)]

    skipped = asyncio.run(go())
    after = asyncio.run(state.budget([scope]).state(scope))
    assert skipped[0] is False and skipped[-1] is True
    assert after.spent_micros == server.billed_micros <= after.cap_micros
    assert after.reserved_micros == 0 and after.calls == skipped.count(False)
