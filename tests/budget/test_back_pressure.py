"""A 429 feeds back into the global limiter: the one told to wait pushes the shared key, and
every other worker, on its own Redis connection, is held as long.

Each test watches the key as another worker would, with a fresh `Limiter` on a second
connection; without the feedback that worker would be admitted at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from memeval.engines.reference import ReferenceEngine
from memeval.llm.answer import Answerer
from memeval.llm.client import LlmClient
from memeval.llm.rates import MAX_PAUSE_S, Rate, RateKind, parse_rates
from memeval.runner.throttle import throttle_engine
from memeval.server import create_app
from memeval.suites.fixture import Assertion
from memeval_farm.budget import connect_redis
from memeval_farm.limiter import Limiter
from memeval_farm.redis_state import limited_engine
from tests.adapters.conftest import TOKEN, engine_at
from tests.adapters.fakes import Fault as EngineFault
from tests.adapters.fakes import Wire, record, running
from tests.llm.server import Fault
from tests.llm.test_answer import PACK, QUESTION, spec

FAST = Rate(kind=RateKind.model, count=100, period_s=1.0, burst=10)
"""Fast enough that probing alone is never refused for more than one 10 ms slot."""
HELD_S = 0.3  # a refusal this long can only come from a pushed-back key


async def held(limiter: Limiter, rate: Rate, name: str, within_s: float) -> float | None:
    """The wait another worker is told once the key is pushed back, or None if it never is."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while loop.time() < deadline:
        allowed, wait_s, _ = await limiter.try_acquire(rate, name)
        if not allowed and wait_s > HELD_S:
            return wait_s
        await asyncio.sleep(0.02)
    return None


def test_back_off_holds_every_worker_on_the_key_and_only_that_key(redis_url, tag):
    async def go() -> None:
        mine, theirs = await connect_redis(redis_url), await connect_redis(redis_url)
        told, other = Limiter(mine, prefix=f"bp-{tag}:"), Limiter(theirs, prefix=f"bp-{tag}:")
        name = f"model-{tag}"
        try:
            await told.pause(FAST, name, 0.5)
            allowed, wait_s, refused_at = await other.try_acquire(FAST, name)
            assert not allowed and 0.45 < wait_s <= 0.5
            # The slot granted is the pause's end itself, on Redis' microsecond clock.
            assert await other.acquire(FAST, name) >= refused_at + wait_s - 1e-6

            assert (await other.try_acquire(FAST, f"neighbour-{tag}"))[0]  # other keys pass

            assert await told.pause(FAST, name, 0.8) > 0.75
            assert await told.pause(FAST, name, 0.1) > 0.7  # a later hold is never pulled in
            assert (await other.try_acquire(FAST, name))[1] > 0.7

            assert await told.pause(FAST, name, 86_400) <= MAX_PAUSE_S  # a daily quota's reply
        finally:
            await mine.aclose()
            await theirs.aclose()

    asyncio.run(go())


def test_a_model_429_holds_the_other_workers(server, redis_url, tag):
    server.inject(Fault(429, retry_after=1))
    the_spec = spec(server, rates=[parse_rates(["model=100/s+10"])[0]])
    rate = the_spec.rates[0]

    async def go() -> tuple[float | None, str | None]:
        mine, theirs = await connect_redis(redis_url), await connect_redis(redis_url)
        client = LlmClient(server.base_url, timeout_s=5)
        answerer = Answerer(the_spec, client, limiter=Limiter(mine, prefix=f"bp-{tag}:"))
        try:
            answering = asyncio.create_task(answerer.answer(QUESTION, PACK))
            wait_s = await held(Limiter(theirs, prefix=f"bp-{tag}:"), rate, the_spec.model, 0.9)
            return wait_s, (await answering).text
        finally:
            await client.aclose()
            await mine.aclose()
            await theirs.aclose()

    wait_s, text = asyncio.run(go())
    # The Retry-After, and at most the one slot after it that the answerer's own retry took.
    assert wait_s is not None and wait_s <= 1.0 + rate.interval_us / 1e6, (
        "the 429 did not reach the shared limiter"
    )
    assert text and server.attempts == 2  # the answerer's own retry still happens


@pytest.fixture
def engine_wire() -> Iterator[tuple[str, Wire]]:
    """memeval's own server around the reference engine, answering faults on demand."""
    wire = Wire()
    app: FastAPI = create_app(ReferenceEngine(), SecretStr(TOKEN))
    record(app, wire)
    with running(app) as url:
        yield url, wire


def test_an_engine_429_holds_the_key_of_the_case_that_met_it(
    engine_wire, redis_url, tag, monkeypatch
):
    """Two cases share one engine (and transport), each behind its own limiter connection:
    the 429 arrives while the other case's call has come and gone, and pushes only its own."""
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", TOKEN)
    url, wire = engine_wire
    engine = engine_at("http", url)
    engine.name = f"http-{tag}"
    rates = parse_rates(["engine=100/s+10"])
    rate = rates[0]
    wire.inject(EngineFault(429, retry_after="1", delay=0.3, path="/assertions"))

    async def go() -> tuple[float | None, bool, int]:
        theirs, elsewhere = await connect_redis(redis_url), await connect_redis(redis_url)
        other_case = throttle_engine(engine, Limiter(elsewhere, prefix=f"bp-{tag}:"), rate)
        try:
            async with limited_engine(engine, rates, redis_url) as case:
                fact = Assertion(id="a1", text="Ada runs the on-call rota.", source="hr")
                storing = asyncio.create_task(case.store("t", fact))
                await asyncio.sleep(0.1)
                await other_case.query("t", "who runs on-call")  # its hook comes and goes
                wait_s = await held(Limiter(theirs), rate, engine.name, 1.0)
                other_key = Limiter(theirs, prefix=f"bp-{tag}:")
                spared, _, _ = await other_key.try_acquire(rate, engine.name)
                await storing
                found = len((await case.query("t", "who runs the on-call rota")).hits)
            return wait_s, spared, found
        finally:
            await engine.close()
            await theirs.aclose()
            await elsewhere.aclose()

    wait_s, spared, found = asyncio.run(go())
    assert wait_s is not None and wait_s <= 1.0, "the engine's 429 did not reach its limiter"
    assert spared, "the 429 pushed the key of a case that never met it"
    assert found and len(wire.calls("/assertions", "POST")) == 2  # retried after the wait
