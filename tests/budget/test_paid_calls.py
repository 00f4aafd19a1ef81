"""Every paid call counts once, whatever becomes of it, measured against the fake service's own
billing log: over interrupts and resumes, requests whose reply never came, and a service that
bills above the hold."""

from __future__ import annotations

import asyncio

from memeval.evaluation.models import paid_so_far
from memeval.llm.answer import PaidCalls
from memeval.llm.prompt import messages
from memeval.results import CaseResult, CaseStatus
from memeval.store import PlannedCase
from memeval.store.models import PaidCall, PaidState
from memeval_farm.budget import Budget, connect_redis
from tests.budget.paying import (
    PACKS,
    QUESTIONS,
    answer_many,
    fake_service,
    forget_redis,
    settled_log,
    spec_for,
    store_at,
)
from tests.llm.redis_support import REDIS_URL
from tests.llm.server import Fault

PLAN = [PlannedCase(case_id="c", kind="fixture")]


async def _open(scope: str, cap: int, spent: int = 0) -> Budget:
    redis = await connect_redis(REDIS_URL)
    budget = Budget(redis, [scope])
    await budget.open(scope, cap, spent_micros=spent)
    return budget


def _overwrite_case(store, run_id: str, usd_micros: int) -> None:
    """Each session's case result replaces the last: it holds that session's spend alone."""
    store.upsert_case_result(
        CaseResult(
            run_id=run_id,
            case_id="c",
            trial=0,
            kind="fixture",
            engine="naive",
            tenant="t",
            status=CaseStatus.skipped_budget,
            answerer_usd_micros=usd_micros,
        )
    )


def test_an_interrupt_and_two_resumes_never_spend_past_the_cap(monkeypatch, tmp_path, tag):
    """Session one is cut off with calls in flight (the service bills them anyway); each later
    session starts on a fresh Redis, as an embedded farm's does, and reopens the budget from the
    store. Spend across all three, as the service billed it, stays within the cap."""
    scope, cap = f"run:{tag}", 30_000
    store = store_at(tmp_path)
    run_id = store.create_run(label="r", engine="naive", suite="s", planned=PLAN).id
    ledger = PaidCalls(run_id, store.record_paid_call)
    with fake_service(monkeypatch, tmp_path, delay=0.3) as server:
        spec = spec_for(server, scope)

        async def interrupted() -> None:
            budget = await _open(scope, cap)
            work = asyncio.ensure_future(answer_many(spec, 40, concurrency=8, ledger=ledger))
            while server.attempts < 16:  # one wave answered, the second at the service
                await asyncio.sleep(0.02)
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
            await budget.redis.aclose()

        asyncio.run(interrupted())
        first = settled_log(server)
        assert first > 0 and len(server.calls) > 8, "the interrupt caught no call in flight"
        assert store.paid_micros([run_id]) >= first  # in-flight calls count at their holds
        _overwrite_case(store, run_id, 0)
        for _ in range(2):
            forget_redis(tag)
            reopened = paid_so_far(store, run_id, [scope])
            assert reopened >= server.billed_micros

            async def resumed(spent: int = reopened) -> int:
                budget = await _open(scope, cap, spent)
                replies = await answer_many(spec, 60, concurrency=8, ledger=ledger)
                await budget.redis.aclose()
                return sum(r.usd_micros for r in replies)

            _overwrite_case(store, run_id, asyncio.run(resumed()))
        billed = settled_log(server)
    assert billed <= cap, f"billed {billed} on a cap of {cap}"
    counted = store.paid_micros([run_id])  # calls cut off count at their holds: above the bill
    assert counted >= billed
    assert counted >= 0.9 * cap  # the resumes did spend what was left


def test_a_reply_that_never_came_counts_at_its_hold(monkeypatch, tmp_path, tag):
    """The client gives up while the service is still working, and the service bills it: such
    attempts are settled at the hold, so the retries stop once the cap is reached."""
    scope = f"run:{tag}"
    store = store_at(tmp_path)
    ledger = PaidCalls("r", store.record_paid_call)
    with fake_service(monkeypatch, tmp_path) as server:
        # max_tokens=4 makes the hold close to the bill, as a released hold would not notice
        spec = spec_for(server, scope, timeout_s=0.2, max_attempts=10, max_tokens=4)
        hold = spec.hold_micros(messages(QUESTIONS[0], PACKS[0]))
        cap = hold * 7 // 2
        server.inject(*[Fault(200, delay=0.5)] * 10)

        async def go():
            budget = await _open(scope, cap)
            reply = (await answer_many(spec, 1, concurrency=1, ledger=ledger))[0]
            state = await budget.state(scope)
            await budget.redis.aclose()
            return reply, state

        reply, state = asyncio.run(go())
        billed = settled_log(server, quiet_s=0.6)
    assert reply.skipped_budget and reply.text is None
    assert len(server.calls) == 3, "each timed-out attempt was billed by the service"
    assert billed <= cap
    assert state.spent_micros == 3 * hold and state.reserved_micros == 0
    assert store.paid_micros(["r"]) == 3 * hold >= billed


def test_a_bill_above_the_hold_closes_the_budget_and_is_reported(monkeypatch, tmp_path, tag):
    scope = f"run:{tag}"
    store = store_at(tmp_path)
    ledger = PaidCalls("r", store.record_paid_call)
    with fake_service(monkeypatch, tmp_path, surcharge_micros=50_000) as server:
        spec = spec_for(server, scope)

        async def go():
            budget = await _open(scope, 10_000_000)
            replies = await answer_many(spec, 3, concurrency=1, ledger=ledger)
            state = await budget.state(scope)
            await budget.redis.aclose()
            return replies, state

        replies, state = asyncio.run(go())
        billed = server.billed_micros
    assert server.attempts == 1, "no call may start once the service billed past a hold"
    assert replies[0].text and replies[1].skipped_budget and replies[2].skipped_budget
    assert state.closed == "overbilled" and state.spent_micros < state.cap_micros
    over = store.overbilling("r")
    assert over.calls == 1 and over.micros == state.overbilled_micros > 0
    assert state.spent_micros == billed == store.paid_micros(["r"])


def test_paid_calls_are_idempotent_by_call_id(tmp_path):
    store = store_at(tmp_path)
    sent = PaidCall(call_id="a", run_id="r", model="m", state=PaidState.sent, held_micros=90,
                    charged_micros=90)  # fmt: skip
    store.record_paid_call(sent)
    store.record_paid_call(sent)
    assert store.paid_micros(["r"]) == 90
    billed = sent.model_copy(update={"state": PaidState.billed, "charged_micros": 30})
    store.record_paid_call(billed)
    store.record_paid_call(billed)
    store.record_paid_call(sent.model_copy(update={"call_id": "b", "run_id": "other"}))
    assert store.paid_micros(["r"]) == 30
    assert store.paid_micros(["r", "other"]) == 120
    assert store.overbilling("r").calls == 0
