"""The budget's Lua scripts against a real Redis: holds, settling, refusal, leases, scopes."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from memeval.errors import UsageError
from memeval.llm.setup import budget_micros
from memeval_farm.budget import Budget, Verdict, connect_redis


def run(coro):
    return asyncio.run(coro)


async def _budget(redis_url: str, scopes: list[str], caps: list[int]) -> tuple[Redis, Budget]:
    redis = await connect_redis(redis_url)
    budget = Budget(redis, scopes)
    for scope, cap in zip(scopes, caps, strict=True):
        await budget.open(scope, cap)
    return redis, budget


def test_hold_settle_release(redis_url, tag):
    async def go():
        redis, budget = await _budget(redis_url, [f"run:{tag}"], [1000])
        hold = await budget.reserve(400)
        assert hold is not None
        state = await budget.state(f"run:{tag}")
        assert (state.spent_micros, state.reserved_micros) == (0, 400)
        await budget.settle(hold, 150)
        await budget.settle(hold, 150)  # a retried settle counts once
        state = await budget.state(f"run:{tag}")
        assert (state.spent_micros, state.reserved_micros, state.calls) == (150, 0, 1)
        other = await budget.reserve(500)
        await budget.release(other)
        state = await budget.state(f"run:{tag}")
        assert (state.spent_micros, state.reserved_micros, state.calls) == (150, 0, 1)
        await redis.aclose()

    run(go())


def test_in_flight_holds_mean_wait_settled_spend_means_refuse(redis_url, tag):
    async def go():
        scope = f"run:{tag}"
        redis, budget = await _budget(redis_url, [scope], [1000])
        first = await budget.reserve(600)
        verdict, hold = await budget.try_reserve(600, hold_id="w")
        assert (verdict, hold) == (Verdict.wait, None)  # may fit once `first` settles cheaply
        await budget.settle(first, 100)
        verdict, second = await budget.try_reserve(600, hold_id="w")
        assert verdict is Verdict.held
        await budget.settle(second, 600)
        verdict, _ = await budget.try_reserve(400)  # 700 spent + 400 > 1000
        assert verdict is Verdict.refused
        state = await budget.state(scope)
        assert state.closed == "exhausted"
        verdict, _ = await budget.try_reserve(1)  # closed: nothing smaller sneaks in
        assert verdict is Verdict.refused
        assert await budget.closed()
        assert state.spent_micros <= state.cap_micros
        await redis.aclose()

    run(go())


def test_waiters_are_served_first_come_first_served(redis_url, tag, monkeypatch):
    async def go():
        scope = f"run:{tag}"
        redis, budget = await _budget(redis_url, [scope], [1000])
        running = await budget.reserve(800)
        assert (await budget.try_reserve(300, hold_id="big"))[0] is Verdict.wait
        # 100 would fit now, but `big` asked first: a later case must not overtake it.
        assert (await budget.try_reserve(100, hold_id="small"))[0] is Verdict.wait
        await budget.settle(running, 500)
        assert (await budget.try_reserve(100, hold_id="small"))[0] is Verdict.wait
        assert (await budget.try_reserve(300, hold_id="big"))[0] is Verdict.held
        assert (await budget.try_reserve(100, hold_id="small"))[0] is Verdict.held
        # A waiter that stops polling leaves the queue instead of blocking everyone.
        monkeypatch.setattr("memeval_farm.budget.STALE_US", 50_000)
        assert (await budget.try_reserve(500, hold_id="gone"))[0] is Verdict.wait
        await asyncio.sleep(0.1)
        assert (await budget.try_reserve(50, hold_id="next"))[0] is Verdict.held
        await redis.aclose()

    run(go())


def test_reserve_waits_for_settling_calls(redis_url, tag):
    async def go():
        redis, budget = await _budget(redis_url, [f"run:{tag}"], [1000])
        first = await budget.reserve(800)

        async def settle_soon():
            await asyncio.sleep(0.2)
            await budget.settle(first, 100)

        settling = asyncio.create_task(settle_soon())
        second = await budget.reserve(800, max_wait_s=5)
        await settling
        assert second is not None
        await redis.aclose()

    run(go())


def test_scopes_are_charged_together_or_not_at_all(redis_url, tag):
    async def go():
        run_scope, sweep_scope = f"run:{tag}", f"sweep:{tag}"
        redis, budget = await _budget(redis_url, [run_scope, sweep_scope], [10_000, 500])
        hold = await budget.reserve(400)
        await budget.settle(hold, 400)
        verdict, _ = await budget.try_reserve(200)  # fits the run, not the sweep
        assert verdict is Verdict.refused
        run_state = await budget.state(run_scope)
        sweep_state = await budget.state(sweep_scope)
        assert run_state.spent_micros == sweep_state.spent_micros == 400
        assert run_state.reserved_micros == sweep_state.reserved_micros == 0
        assert sweep_state.closed == "exhausted" and run_state.closed is None
        await redis.aclose()

    run(go())


def test_a_vanished_workers_hold_lapses_as_spent_then_settles_true(redis_url, tag):
    async def go():
        scope = f"run:{tag}"
        redis, budget = await _budget(redis_url, [scope], [1000])
        lost = await budget.reserve(300, lease_s=0.05)
        await asyncio.sleep(0.1)
        late = await budget.reserve(100)  # reaps the lapsed hold
        state = await budget.state(scope)
        assert (state.spent_micros, state.reserved_micros) == (300, 100)
        await budget.settle(lost, 120)  # the slow call did finish: its true cost replaces it
        await budget.release(late)
        state = await budget.state(scope)
        assert (state.spent_micros, state.reserved_micros) == (120, 0)
        await redis.aclose()

    run(go())


def test_reopen_keeps_spend_and_unopened_scope_fails(redis_url, tag):
    async def go():
        scope = f"run:{tag}"
        redis, budget = await _budget(redis_url, [scope], [1000])
        hold = await budget.reserve(100)
        await budget.settle(hold, 100)
        state = await budget.open(scope, 1000)  # a resumed run
        assert state.spent_micros == 100
        stranger = Budget(redis, [f"never:{tag}"])
        with pytest.raises(Exception, match="never opened"):
            await stranger.try_reserve(1)
        await budget.close("service: key limit")
        assert (await budget.state(scope)).closed == "service: key limit"
        await redis.aclose()

    run(go())


@pytest.mark.parametrize("value", [0, -1, -0.5, 1e-9, float("nan")])
def test_zero_negative_or_vanishing_budget_is_a_usage_error(value):
    with pytest.raises(UsageError, match="must be positive") as caught:
        budget_micros(value)
    assert caught.value.exit_code == 2


def test_unreachable_redis_is_a_clear_usage_error():
    with pytest.raises(UsageError, match="cannot reach Redis") as caught:
        asyncio.run(connect_redis("redis://:secret@127.0.0.1:1/0"))
    assert "secret" not in caught.value.render()


def test_a_new_scope_can_be_seeded_with_the_spend_of_an_earlier_session(redis_url, tag):
    async def go():
        scope = f"run:{tag}"
        redis = await connect_redis(redis_url)
        budget = Budget(redis, [scope])
        state = await budget.open(scope, 1000, spent_micros=900)
        assert state.spent_micros == 900
        assert (await budget.try_reserve(200))[1] is None  # only 100 left
        again = await budget.open(scope, 1000, spent_micros=0)  # a live scope keeps its count
        assert again.spent_micros == 900
        with pytest.raises(ValueError, match="negative"):
            await budget.open(f"other:{tag}", 1000, spent_micros=-1)
        await redis.aclose()

    run(go())
