"""Two paths past a budget's cap, against a fake service whose billing log is the truth and a
budget in real Redis: a billed 200 that cannot be read, and a service billing above its holds
while many calls are in flight."""

from __future__ import annotations

import asyncio

import pytest

from memeval.llm.prompt import messages
from memeval_farm.budget import Budget, connect_redis
from tests.budget.paying import PACKS, QUESTIONS, answer_many, fake_service, settled_log, spec_for
from tests.llm.redis_support import REDIS_URL
from tests.llm.server import Fault


def test_a_billed_200_that_cannot_be_read_counts_at_its_hold(monkeypatch, tmp_path, tag):
    scope = f"run:{tag}"
    with fake_service(monkeypatch, tmp_path) as server:
        spec = spec_for(server, scope, max_attempts=3)
        hold = spec.hold_micros(messages(QUESTIONS[0], PACKS[0]))
        server.inject(*[Fault(200, cut=True)] * 3)

        async def go():
            redis = await connect_redis(REDIS_URL)
            budget = Budget(redis, [scope])
            await budget.open(scope, 100 * hold)
            (reply,) = await answer_many(spec, 1, concurrency=1)
            state = await budget.state(scope)
            await redis.aclose()
            return reply, state

        reply, state = asyncio.run(go())
        billed = settled_log(server)
    assert len(server.calls) == 3 and billed > 0, "the service billed each cut answer"
    assert reply.text is None and "200 without JSON" in (reply.error or ""), reply
    assert state.reserved_micros == 0
    assert state.spent_micros == 3 * hold >= billed  # never below what the service billed


@pytest.mark.parametrize("concurrency", [8, 32])
def test_a_service_billing_above_its_holds_cannot_carry_the_spend_past_the_cap(
    monkeypatch, tmp_path, tag, concurrency
):
    """Every call is billed its price plus twice its hold. Before, as many calls as the cap
    had room for were in flight when the first bill came back: 200-300% of the cap."""
    scope = f"run:{tag}"
    with fake_service(monkeypatch, tmp_path) as server:
        spec = spec_for(server, scope)
        hold = spec.hold_micros(messages(QUESTIONS[2], PACKS[2]))
        server.surcharge_micros = 2 * hold
        cap = 4 * hold

        async def go():
            redis = await connect_redis(REDIS_URL)
            budget = Budget(redis, [scope])
            await budget.open(scope, cap)
            await answer_many(spec, 60, concurrency=concurrency)
            state = await budget.state(scope)
            await redis.aclose()
            return state

        state = asyncio.run(go())
        billed = settled_log(server)
    assert state.closed == "overbilled" and state.overbilled_calls >= 1
    assert billed <= cap, f"{billed / cap:.0%} of the cap billed"
    assert state.spent_micros == billed  # the ledger saw every bill
