"""What the service sees: the limiter's spacing at its door, and how much of a cap the holds
let a run spend, both measured from the fake service's own log."""

from __future__ import annotations

import asyncio

import pytest

from memeval.llm.prompt import messages
from memeval.llm.rates import parse_rate
from memeval.llm.tokens import prompt_tokens_bound
from memeval_farm.budget import Budget, connect_redis
from tests.budget.paying import (
    MODEL,
    PACKS,
    QUESTIONS,
    answer_many,
    fake_service,
    settled_log,
    spec_for,
)
from tests.llm.redis_support import REDIS_URL
from tests.llm.server import busiest_window


def test_calls_reach_the_service_at_the_rate_even_after_waiting_on_the_budget(
    monkeypatch, tmp_path, tag
):
    """Forty callers wait a second and a half for budget room, then all may go: had they taken
    their rate slots before that wait, thirty of them would arrive together. R=20/s, burst 2:
    no one-second window at the service may hold more than 22."""
    scope = f"run:{tag}"
    with fake_service(monkeypatch, tmp_path, tag) as server:
        spec = spec_for(server, scope, model=f"{MODEL}-{tag}", rates=[parse_rate("model=20/s+2")])

        async def go() -> None:
            redis = await connect_redis(REDIS_URL)
            budget = Budget(redis, [scope])
            cap = 100 * spec.hold_micros(messages(QUESTIONS[2], PACKS[2]))
            await budget.open(scope, cap)
            blocker = await budget.reserve(cap)  # the room is full until it is released
            assert blocker is not None
            work = asyncio.ensure_future(answer_many(spec, 40, concurrency=40))
            await asyncio.sleep(1.5)
            await budget.release(blocker)
            replies = await work
            assert all(r.text for r in replies)
            await redis.aclose()

        asyncio.run(go())
    assert len(server.arrivals) == 40
    assert busiest_window(server.arrivals) <= 22, busiest_window(server.arrivals)


def test_the_prompt_hold_is_the_billed_count_plus_a_small_margin(monkeypatch, tmp_path, tag):
    with fake_service(monkeypatch, tmp_path) as server:
        asyncio.run(answer_many(spec_for(server, f"run:{tag}", budget_scopes=[]), 3, concurrency=1))
    for call, question, pack in zip(server.calls, QUESTIONS, PACKS, strict=True):
        held = prompt_tokens_bound(MODEL, messages(question, pack))
        assert call.prompt_tokens <= held <= call.prompt_tokens + 24
    chat = messages(QUESTIONS[0], PACKS[0])
    assert prompt_tokens_bound("some/other-model", chat) > 3 * call.prompt_tokens  # byte bound


@pytest.mark.parametrize("concurrency", [1, 8, 32])
def test_the_cap_is_used_to_ninety_percent_and_never_passed(
    monkeypatch, tmp_path, tag, concurrency
):
    """A cap of four full holds, about twenty-five answers: were every call to hold its full
    `max_tokens` (five times a typical bill) to the end, the last full hold would not fit and
    a quarter of the cap would be left. Once five calls have settled, the tail is spent in
    holds sized by their completions instead."""
    scope = f"run:{tag}"
    with fake_service(monkeypatch, tmp_path) as server:
        spec = spec_for(server, scope)
        cap = 4 * spec.hold_micros(messages(QUESTIONS[2], PACKS[2]))

        async def go() -> None:
            redis = await connect_redis(REDIS_URL)
            await Budget(redis, [scope]).open(scope, cap)
            await answer_many(spec, 120, concurrency=concurrency)
            await redis.aclose()

        asyncio.run(go())
        billed = settled_log(server, quiet_s=0.1)
    assert billed <= cap
    assert billed >= 0.9 * cap, f"{billed / cap:.1%} of the cap used"
