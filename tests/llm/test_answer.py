"""The client and the Answerer over real HTTP against the local OpenRouter stand-in."""

from __future__ import annotations

import asyncio
import time

import pytest

from memeval.errors import (
    AuthError,
    InFlightBudget,
    ModelCreditsExhausted,
    RateLimited,
    Transient,
    UsageError,
)
from memeval.llm.answer import Answerer
from memeval.llm.client import LlmClient
from memeval.llm.pricing import Price
from memeval.llm.prompt import MAX_TOKENS, PROMPT_VERSION, is_unknown, messages
from memeval.llm.rates import parse_rate
from memeval.llm.spec import LlmSpec
from memeval_farm.budget import Budget, connect_redis
from memeval_farm.redis_state import answerer_for, open_answerer
from tests.llm.server import Fault, hard_402, in_flight

PACK = "# Memory\n\n## Documents\n- The billing service listens on port 8443.\n"
QUESTION = "Which port does the billing service listen on?"
CHEAP = Price(prompt=1 / 1_000_000, completion=2 / 1_000_000)


def spec(server, **changes) -> LlmSpec:
    base = LlmSpec(model="test/cheap", base_url=server.base_url, price=CHEAP, max_attempts=4)
    return base.model_copy(update=changes)


def ask(the_spec: LlmSpec, redis_url: str | None = None, question=QUESTION, pack=PACK):
    async def go():
        async with open_answerer(the_spec, redis_url=redis_url) as answerer:
            return await answerer.answer(question, pack)

    return asyncio.run(go())


def test_answer_records_text_tokens_and_billed_cost(server):
    reply = ask(spec(server))
    assert reply.text == "The billing service listens on port 8443."
    call = server.calls[-1]
    assert (reply.prompt_tokens, reply.completion_tokens) == (
        call.prompt_tokens,
        call.completion_tokens,
    )
    assert reply.usd_micros == call.cost_micros > 0
    assert not reply.skipped_budget and reply.error is None


def test_abstention_is_a_clear_unknown(server):
    reply = ask(spec(server), pack="# Memory\n")
    assert reply.text == "unknown" and is_unknown(reply.text)


def test_client_single_attempts_raise_typed_errors(server):
    async def go():
        client = LlmClient(server.base_url, timeout_s=0.3)
        chat = messages(QUESTION, PACK)
        try:
            server.inject(Fault(429, retry_after=2))
            with pytest.raises(RateLimited) as limited:
                await client.chat("test/cheap", chat, max_tokens=MAX_TOKENS)
            assert limited.value.retry_after == 2
            server.inject(in_flight(1.5))
            with pytest.raises(InFlightBudget) as settling:
                await client.chat("test/cheap", chat, max_tokens=MAX_TOKENS)
            assert settling.value.retry_after == 1.5
            server.inject(hard_402())
            with pytest.raises(ModelCreditsExhausted):
                await client.chat("test/cheap", chat, max_tokens=MAX_TOKENS)
            for status in (408, 502, 503):
                server.inject(Fault(status))
                with pytest.raises(Transient):
                    await client.chat("test/cheap", chat, max_tokens=MAX_TOKENS)
            server.inject(Fault(200, error200=True))
            with pytest.raises(Transient, match="provider disconnected"):
                await client.chat("test/cheap", chat, max_tokens=MAX_TOKENS)
            server.inject(Fault(200, delay=1.0))
            with pytest.raises(Transient, match="timed out"):
                await client.chat("test/cheap", chat, max_tokens=MAX_TOKENS)
            info = await client.key_info()
            assert info is not None and info.limit_remaining is None
        finally:
            await client.aclose()

    asyncio.run(go())


def test_transient_failures_are_retried_until_an_answer(server):
    server.inject(
        Fault(503, retry_after=0.05),
        Fault(502),
        Fault(200, error200=True),
        in_flight(0.05),
    )
    reply = ask(spec(server, max_attempts=6))
    assert reply.text and reply.error is None
    assert server.attempts == 5 and len(server.calls) == 1


def test_a_slow_reply_times_out_and_is_retried(server):
    server.inject(Fault(200, delay=1.5))
    reply = ask(spec(server, timeout_s=0.5))
    assert reply.text and server.attempts == 2


def test_retries_give_up_as_an_error_not_an_exception(server):
    server.inject(*[Fault(503, retry_after=0.01)] * 3)
    reply = ask(spec(server, max_attempts=3))
    assert reply.text is None and "gave up after 3 attempts" in (reply.error or "")


def test_a_rejected_request_is_not_retried(server):
    reply = ask(spec(server, model="test/unknown"))
    assert reply.error and "not a valid model" in reply.error and server.attempts == 1


def test_a_429_pushes_the_shared_limiter_back(server, redis_url, tag):
    server.inject(Fault(429, retry_after=0.6))
    started = time.monotonic()
    reply = ask(spec(server, model="test/cheap", rates=[parse_rate("model=100/s")]), redis_url)
    assert reply.text and time.monotonic() - started >= 0.55


def test_a_hard_402_stops_every_paid_call(server, redis_url, tag):
    scope = f"run:{tag}"

    async def go():
        redis = await connect_redis(redis_url)
        budget = Budget(redis, [scope])
        await budget.open(scope, 1_000_000)
        server.inject(hard_402())
        async with open_answerer(spec(server, budget_scopes=[scope]), redis_url=redis_url) as a:
            first = await a.answer(QUESTION, PACK)
            second = await a.answer(QUESTION, PACK)
        async with open_answerer(spec(server, budget_scopes=[scope]), redis_url=redis_url) as b:
            elsewhere = await b.answer(QUESTION, PACK)  # another worker: also stopped
        state = await budget.state(scope)
        await redis.aclose()
        return first, second, elsewhere, state

    first, second, elsewhere, state = asyncio.run(go())
    assert first.skipped_budget and second.skipped_budget and elsewhere.skipped_budget
    assert server.attempts == 1 and state.closed and "openrouter_credits" in state.closed
    assert state.reserved_micros == 0 and state.spent_micros == 0


def test_budget_settles_the_true_cost(server, redis_url, tag):
    scope = f"run:{tag}"

    async def go():
        redis = await connect_redis(redis_url)
        budget = Budget(redis, [scope])
        await budget.open(scope, 1_000_000)
        server.inject(Fault(503))  # the failed attempt's hold is released, not spent
        async with open_answerer(spec(server, budget_scopes=[scope]), redis_url=redis_url) as a:
            reply = await a.answer(QUESTION, PACK)
        state = await budget.state(scope)
        await redis.aclose()
        return reply, state

    reply, state = asyncio.run(go())
    assert state.spent_micros == reply.usd_micros == server.billed_micros
    assert state.reserved_micros == 0 and state.calls == 1


def test_hold_bounds_the_true_cost(server):
    the_spec = spec(server)
    reply = ask(the_spec)
    assert the_spec.hold_micros(messages(QUESTION, PACK)) >= reply.usd_micros


def test_answerer_guards(server):
    async def go():
        client = LlmClient(server.base_url)
        try:
            with pytest.raises(UsageError, match="prompt answer-v0"):
                Answerer(spec(server, prompt_version="answer-v0"), client)
            with pytest.raises(UsageError, match="needs Redis"):
                Answerer(spec(server, budget_scopes=["x"]), client)
        finally:
            await client.aclose()
        async with answerer_for(None) as nothing:
            assert nothing is None
        with pytest.raises(UsageError, match="need Redis"):
            async with open_answerer(spec(server, budget_scopes=["x"])):
                pass

    asyncio.run(go())
    assert PROMPT_VERSION == "answer-v1"


def test_openrouter_without_a_key_fails_before_any_call(monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    monkeypatch.delenv("MEMEVAL_LLM_KEY", raising=False)
    with pytest.raises(AuthError, match="no key") as caught:
        LlmClient()
    assert "OPENROUTER_API_KEY" in caught.value.render()


def test_a_refused_key_names_the_variable_it_came_from(server, monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY")
    monkeypatch.setenv("MEMEVAL_LLM_KEY", "wrong")
    with pytest.raises(AuthError) as caught:
        ask(spec(server))
    assert "MEMEVAL_LLM_KEY" in caught.value.render()
