"""An engine call that fails after its retries is infrastructure, never a scored miss; and the
time spent on failed attempts and between them is not the engine's latency."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from memeval.engines.adapters.transport import Transport
from memeval.engines.reference import ReferenceEngine
from memeval.engines.registry import create
from memeval.errors import EngineUnavailable
from memeval.runner import run_case
from memeval.server import create_app
from memeval.stopwatch import Stopwatch
from memeval.suites.catalog import resolve
from tests.adapters.fakes import Fault, Wire, record, running

TOKEN = "infra-test-token"


@pytest.fixture
def wire() -> Wire:
    return Wire()


@pytest.fixture
def slow_url(wire: Wire) -> Iterator[str]:
    app = FastAPI()
    record(app, wire)

    @app.get("/recall")
    async def recall() -> dict[str, bool]:
        return {"ok": True}

    with running(app) as url:
        yield url


def transport(url: str, retries: int) -> Transport:
    return Transport(
        url, engine="fake", key=None, key_env="FAKE_KEY", timeout=2.0, retries=retries, backoff=0.2
    )


def test_latency_is_the_attempt_that_answered(slow_url: str, wire: Wire):
    # The first attempt takes 0.4 s and fails; the backoff waits 0.1-0.2 s; the second answers.
    wire.inject(Fault(503, delay=0.4))
    watch = Stopwatch()

    async def call() -> float:
        t = transport(slow_url, retries=2)
        started = time.perf_counter()
        try:
            await watch.time("pre_turn", t.call("GET", "/recall"))
        finally:
            await t.aclose()
        return (time.perf_counter() - started) * 1000

    wall_ms = asyncio.run(call())
    [timing] = watch.timings
    assert wall_ms >= 500
    assert timing.ms < wall_ms - 450  # neither the failed attempt nor the wait is in it
    assert watch.retried.failed == 1 and watch.retried.lost_ms >= 500


def test_a_call_that_never_succeeds_counts_every_attempt(slow_url: str, wire: Wire):
    wire.inject(*[Fault(500)] * 3)
    watch = Stopwatch()

    async def call() -> None:
        t = transport(slow_url, retries=2)
        try:
            await watch.time("query", t.call("GET", "/recall"))
        finally:
            await t.aclose()

    with pytest.raises(EngineUnavailable, match="answered 500 after 3 attempts"):
        asyncio.run(call())
    assert watch.retried.failed == 3


@pytest.fixture
def engine_url(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", TOKEN)
    app = create_app(ReferenceEngine(), SecretStr(TOKEN))
    record(app, wire)
    with running(app) as url:
        yield url


@pytest.mark.parametrize("status", [500, 503])
@pytest.mark.parametrize(
    ("case_id", "route"),
    [
        ("lifecycle/conflicts", "/turns/pre"),
        ("dimensions/conflict/supplier_iban_correction", "/query"),
    ],
)
def test_a_call_the_engine_cannot_answer_is_no_miss(
    engine_url: str, wire: Wire, status: int, case_id: str, route: str
):
    """Recall (a scenario's pre_turn, a fixture's query) fails past the retries: the case
    raises for the farm to rerun it, instead of coming back `done` with misses scored."""
    case = next(c.case for c in resolve("all").cases if c.case.id == case_id)
    wire.inject(*[Fault(status, path=route)] * 50)

    async def run() -> None:
        engine = create("http?" + urlencode({"url": engine_url, "retries": 1, "backoff": 0.01}))
        try:
            await run_case(case, engine, run_id="down")
        finally:
            await engine.close()

    with pytest.raises(EngineUnavailable, match=f"answered {status} after 2 attempts"):
        asyncio.run(run())
    assert wire.calls(route)  # the engine was reached, and its recall is what failed


def test_the_up_front_check_rides_out_a_flaky_front_door(engine_url: str, wire: Wire):
    """Four failures in a row at the door (503, 429, 502, 500) are what a case would ride
    out; the check before dispatch must not refuse the whole run for them."""
    wire.inject(*(Fault(status, path="/v1/engine") for status in (503, 429, 502, 500)))

    async def check() -> None:
        engine = create("http?" + urlencode({"url": engine_url}))
        try:
            await engine.preflight()
        finally:
            await engine.close()

    asyncio.run(check())
    assert sum(s.path == "/v1/engine" for s in wire.seen) == 5
