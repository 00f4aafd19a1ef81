"""memeval's `mem0` adapter against the same fake that mem0's own SDK is tested on."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memeval.engines.idempotency import write_key
from memeval.engines.registry import describe
from memeval.engines.types import MemoryItem, Turn, TurnContext
from memeval.errors import AuthRejected, CreditsExhausted
from memeval.suites.fixture import Assertion
from tests.adapters.builtin_suite import every_case_done, run_builtin_suite
from tests.adapters.conftest import engine_at, run
from tests.adapters.fake_mem0 import MEM0_KEY, FakeMem0
from tests.adapters.fakes import Fault, running

QUICK = "poll=0.01&event_wait=5"
FIRST = Assertion(id="plan-1", text="Acme is on the Free plan.", source="crm")


@pytest.fixture
def mem0(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeMem0, str]]:
    fake = FakeMem0()
    monkeypatch.setenv("MEM0_API_KEY", MEM0_KEY)
    with running(fake.app()) as url:
        yield fake, url


def body(seen: bytes) -> dict:
    return json.loads(seen)


def test_writes_and_reads_speak_v3_with_ids_where_the_api_wants_them(mem0):
    fake, url = mem0
    engine = engine_at("mem0", url, QUICK)

    async def calls():
        with write_key("run-1/case/0/w0"):
            await engine.store("t", FIRST)
        found = await engine.query("t", "Acme plan")
        other = await engine.query("u", "Acme plan")
        await engine.close()
        return found, other

    found, other = run(calls())
    assert all(s.headers["authorization"] == f"Token {MEM0_KEY}" for s in fake.wire.seen)
    added = body(fake.wire.calls("/v3/memories/add/")[0].body)
    assert added["user_id"] == "t" and added["infer"] is False
    assert added["metadata"]["memeval_write"] == "run-1/case/0/w0"
    searched = body(fake.wire.calls("/v3/memories/search/")[0].body)
    assert searched["filters"] == {"user_id": "t"} and "user_id" not in searched
    assert found.hits[0].assertion_id == "plan-1" and found.hits[0].source == "crm"
    assert other.hits == []


def test_a_fixture_write_waits_for_its_event_before_the_query(mem0):
    fake, url = mem0
    fake.sync_verbatim = False  # infer=false queued too, as mem0's plugin docs describe
    fake.delay = 0.2
    engine = engine_at("mem0", url, QUICK)

    async def calls():
        await engine.store("t", FIRST)
        found = await engine.query("t", "Acme plan")
        await engine.close()
        return found

    assert run(calls()).hits[0].assertion_id == "plan-1"
    assert len(fake.wire.calls("/v1/event/")) >= 2  # polled while PENDING


def test_lifecycle_settles_on_mem0s_events(mem0):
    fake, url = mem0
    fake.delay = 0.3
    engine = engine_at("mem0", url, QUICK + "&infer=true")
    turn = Turn(role="user", text="Who owns the rota?", at=datetime.now(UTC))

    async def calls():
        written = await engine.ingest("t", MemoryItem(id="d", text="Grace owns the rota."))
        early = await engine.list("t")
        await engine.pre_turn("t", TurnContext(agent="a", thread="x", turn=turn))
        await asyncio.sleep(0.4)
        listed = await engine.list("t")
        pack = await engine.pre_turn("t", TurnContext(agent="a", thread="y", turn=turn))
        await engine.forget("t")
        await engine.close()
        return written, early, listed, pack

    written, early, listed, pack = run(calls())
    assert early == []  # queued, so not yet visible
    assert written in listed and len(listed) == 2  # the document and the logged question
    assert "Grace owns the rota." in pack.markdown
    assert fake.wire.calls("/v1/memories/", "DELETE")[0].query == "user_id=t"


def test_a_failed_write_is_never_listed(mem0):
    fake, url = mem0
    fake.sync_verbatim = False
    fake.fail_next_adds = 1
    engine = engine_at("mem0", url, QUICK)

    async def calls():
        lost = await engine.ingest("t", MemoryItem(id="a", text="first"))
        kept = await engine.ingest("t", MemoryItem(id="b", text="second"))
        await asyncio.sleep(0.15)
        listed = await engine.list("t")
        await engine.close()
        return lost, kept, listed

    lost, kept, listed = run(calls())
    assert listed == [kept] and lost not in listed


def test_preflight_names_the_variable_for_a_refused_key(mem0, monkeypatch):
    _fake, url = mem0
    monkeypatch.setenv("MEM0_API_KEY", "m0-wrong")
    engine = engine_at("mem0", url)
    with pytest.raises(AuthRejected) as refused:
        run(engine.preflight())
    assert "MEM0_API_KEY" in refused.value.fix and "m0-wrong" not in str(refused.value)


def test_preflight_passes_with_a_good_key(mem0):
    fake, url = mem0
    run(engine_at("mem0", url).preflight())
    assert fake.wire.calls("/v1/ping/", "GET")


def test_402_stops_the_run_as_credits_exhausted(mem0):
    fake, url = mem0
    fake.wire.inject(Fault(402, body={"detail": "Payment required"}, path="/add/"))
    with pytest.raises(CreditsExhausted):
        run(engine_at("mem0", url, QUICK).store("t", FIRST))


def test_rate_limits_server_errors_and_timeouts_are_retried(mem0):
    fake, url = mem0
    engine = engine_at("mem0", url, QUICK + "&timeout=0.5")
    fake.wire.inject(
        Fault(429, retry_after="0.1", path="/search/"),
        Fault(503, path="/search/"),
        Fault(0, delay=1.0, path="/search/"),
    )

    async def calls():
        await engine.store("t", FIRST)
        found = await engine.query("t", "Acme plan")
        await engine.close()
        return found

    assert run(calls()).hits
    assert len(fake.wire.calls("/search/")) == 4


def test_the_full_built_in_suite_runs_and_every_scenario_settles(mem0):
    fake, url = mem0
    fake.sync_verbatim = False  # every write queued: the hardest case for settling
    results = run_builtin_suite(engine_at("mem0", url, QUICK), "mem0-suite")
    scenarios = every_case_done(results)
    assert any(p.hit for r in scenarios for p in r.probes)  # packs come back from search
    assert all(r.checks for r in results if r.kind == "fixture")
    time.sleep(fake.delay * 2)
    fake.advance()  # the queued deletions are due: every tenant was forgotten
    assert fake.memories == {}


def test_engines_listing_says_what_mem0_was_verified_against():
    row = next(r for r in describe() if r.name == "mem0")
    assert row.verified_against.startswith("mem0ai 2.2.1")
