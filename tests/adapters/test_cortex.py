"""`cortex` against the SDK-validated fake CortexDB on 127.0.0.1 (`fake_cortex`): the actor,
the closed envelope, settling on the doubled listing, forget by id, the drain rule, usage,
and the faults a live server produces."""

from __future__ import annotations

import hashlib
import json
import time

import pytest

from memeval.engines.adapters.cortex import CortexEngine
from memeval.engines.adapters.cortex_scope import tenant_id
from memeval.engines.idempotency import write_key
from memeval.engines.registry import create
from memeval.engines.types import Capability, MemoryItem, Turn, TurnContext
from memeval.errors import AuthRejected, CreditsExhausted, Unsupported, UsageError
from memeval.results import CaseStatus, Phase
from memeval.runner import run_case
from memeval.suites.catalog import resolve
from memeval.suites.fixture import Assertion
from tests.adapters.conftest import engine_at, run
from tests.adapters.fake_cortex import CALLER, FakeCortex
from tests.adapters.fakes import Fault, running

QUICK = "enrich_wait=2&enrich_poll=0.01"


def scenario(name: str):
    return next(c.case for c in resolve("lifecycle").cases if c.case.id.endswith(name))


def cortex_engine(url: str, extra: str = QUICK) -> CortexEngine:
    engine = engine_at("cortex", url, extra)
    assert isinstance(engine, CortexEngine)
    return engine


def bodies(cortex: FakeCortex, path: str) -> list[dict]:
    return [json.loads(s.body) for s in cortex.wire.calls(path, "POST")]


def test_connect_learns_the_caller_and_writes_carry_the_runners_key(cortex_url, cortex):
    engine = cortex_engine(cortex_url)

    async def calls() -> None:
        with write_key("run-1/case-a/0/w3"):
            await engine.ingest("t", MemoryItem(id="d", title="Rota", text="Grace owns it."))
        await engine.close()

    run(calls())
    assert engine.version == "v0.10.5"
    whoami, *rest = cortex.wire.seen
    assert whoami.path == "/v1/auth/whoami"
    assert whoami.headers["x-cortex-actor"] == "user:default"  # the SDK's default actor
    assert rest and all(s.headers.get("x-cortex-actor") == CALLER for s in rest)
    (sent,) = bodies(cortex, "/v1/experience")
    key = hashlib.sha256(b"run-1/case-a/0/w3").hexdigest()
    assert sent["idempotency_key"] == "mv-" + key[:56]  # stable across retries and workers
    assert sent["content"] == {"kind": "message", "role": "user", "text": "Rota\n\nGrace owns it."}
    assert sent["context"]["labels"] == ["mv:w:" + key[:16]]
    assert sent["scope"] == "app:memeval/ws:t" and sent["modality"] == "document"


def test_a_server_without_whoami_gets_the_configured_actor(cortex_url, cortex, monkeypatch):
    cortex.whoami_route = False  # a server from before whoami: nothing names the caller
    monkeypatch.setenv("CORTEX_ACTOR", "agent:memeval")
    engine = cortex_engine(cortex_url)
    run(engine.ingest("t", MemoryItem(id="d", text="x")))
    assert cortex.wire.calls("/v1/experience")
    assert {s.headers.get("x-cortex-actor") for s in cortex.wire.seen} == {"agent:memeval"}


def test_fixture_writes_flush_in_one_waited_bulk_and_hits_carry_their_source(cortex_url, cortex):
    engine = cortex_engine(cortex_url)
    first = Assertion(id="plan-1", text="Acme is on the Free plan.", source="crm")
    second = Assertion(id="plan-2", text="Acme is on the Enterprise plan.", source="billing")

    async def calls():
        await engine.store("t", first)
        await engine.store("t", second)
        assert not cortex.wire.calls("/v1/experience")  # nothing sent yet
        found = await engine.query("t", "Which plan is Acme on?")
        await engine.reset("t")
        await engine.close()
        return found

    found = run(calls())
    (bulk,) = cortex.wire.calls("/v1/experience/bulk")
    assert bulk.query == "wait=indexed"
    assert {h.text for h in found.hits} == {first.text, second.text}
    assert {h.source for h in found.hits} == {"crm", "billing"}
    assert not found.abstained
    assert cortex.log.events == []  # reset forgot the scope
    assert Capability.conflicts not in engine.capabilities
    with pytest.raises(Unsupported):
        run(engine.conflicts("t", "plan-1"))


def test_query_at_sends_a_capture_time_window(cortex_url, cortex):
    engine = cortex_engine(cortex_url)
    old = Assertion(
        id="a", text="Acme pays by card.", source="crm", recorded_at="2024-01-05T00:00:00Z"
    )
    new = Assertion(
        id="b", text="Acme pays by invoice.", source="crm", recorded_at="2025-03-01T00:00:00Z"
    )

    async def calls():
        await engine.store("t", old)
        await engine.store("t", new)
        then = await engine.query_at("t", "How does Acme pay?", old.recorded_at.replace(month=6))
        await engine.close()
        return then

    then = run(calls())
    assert [h.text for h in then.hits] == ["Acme pays by card."]
    (recall,) = bodies(cortex, "/v1/recall")
    assert recall["temporal"] == {"valid_during": "1970-01-01T00:00:00Z..2024-06-05T00:00:00Z"}
    assert set(recall) <= {"scope", "query", "diagnostics", "budgets", "filters", "temporal"}
    assert recall["diagnostics"] == "none"  # as the SDK sends it: free tiers lack the rest


def test_a_scenario_settles_on_the_doubled_listing_and_is_inspected(cortex_url, cortex):
    engine = cortex_engine(cortex_url)

    async def go():
        result = await run_case(scenario("learnings"), engine, run_id="r")
        await engine.close()
        return result

    result = run(go())
    assert result.status is CaseStatus.done, result.error
    assert len(cortex.wire.calls("/v1/events")) > 2  # lagging writes: several polls
    synthesis = [p for p in result.probes if p.phase is Phase.synthesis and p.scored]
    assert synthesis and all(p.captured is not None for p in synthesis)
    assert cortex.log.builds  # one build per tenant, after the drain
    window = result.engine_usage  # running totals around the case, as admin/usage reports them
    assert window is not None and window.before.calls >= 100  # the fake's account had history
    assert window.after.calls - window.before.calls == cortex.log.billed_events
    assert result.engine_usd_micros == cortex.log.billed_events * 100
    assert cortex.log.events == []  # the case forgot what it wrote, late probe turns included
    for forget in cortex.log.forgets:
        assert forget["selector"]["memory_ids"] and forget["confirm_all"] is False


def test_list_counts_each_write_once_across_pages(cortex_url, cortex):
    cortex.log.lag = 0
    engine = cortex_engine(cortex_url)

    async def go() -> list[str]:
        for n in range(130):  # 260 listed rows: two pages of 200
            turn = Turn(role="user", text=f"note {n}", at="2026-01-01T00:00:00Z")
            await engine.post_turn("t", "a", "th", turn)
        listed = await engine.list("t")
        await engine.forget("t")
        await engine.close()
        return listed

    listed = run(go())
    assert len(listed) == len(set(listed)) == 130
    pages = [s for s in cortex.wire.calls("/v1/events") if "cursor=" in s.query]
    assert pages  # the second page was followed
    assert [len(f["selector"]["memory_ids"]) for f in cortex.log.forgets] == [100, 30]
    assert cortex.log.events == []


def test_pre_turn_recalls_before_logging_and_drops_turns_still_in_the_prompt(cortex_url, cortex):
    cortex.log.lag = 0
    engine = cortex_engine(cortex_url)
    at = "2026-01-01T10:00:00Z"
    said = Turn(role="assistant", text="The rota belongs to Grace.", at=at)
    doc = MemoryItem(id="d", text="Grace owns the on-call rota.")

    async def go():
        await engine.ingest("t", doc)
        await engine.post_turn("t", "a", "th", said)
        ask = Turn(role="user", text="Who owns the rota?", at=at)
        pack = await engine.pre_turn(
            "t", TurnContext(agent="a", thread="th", turn=ask, in_prompt=[said])
        )
        await engine.close()
        return pack

    pack = run(go())
    assert "Grace owns the on-call rota." in pack.markdown
    assert "belongs to Grace" not in pack.markdown  # still in the prompt
    assert "Who owns the rota?" not in pack.markdown  # logged only after the recall
    assert bodies(cortex, "/v1/experience")[-1]["content"]["text"] == "Who owns the rota?"


def test_beliefs_wait_for_the_backlog_to_drain(cortex_url, cortex):
    cortex.log.drain_per_read = 1
    engine = cortex_engine(cortex_url, "enrich_wait=5&enrich_poll=0.01")

    async def build():
        await engine.ingest("t", MemoryItem(id="d", text="Grace owns the rota."))
        await engine.ingest("t", MemoryItem(id="e", text="Acme renews in May."))
        reads = len(cortex.wire.calls("/v1/admin/usage"))
        report = await engine.build_beliefs("t")
        await engine.close()
        return len(cortex.wire.calls("/v1/admin/usage")) - reads, report

    polls, report = run(build())
    # one job drains per read: pending 1, then 0 with nothing newly queued on four reads
    assert polls == 5
    assert report.built == 2 and {b.subject for b in report.beliefs} == {"user"}


def test_the_enrichment_wait_is_capped(cortex_url, cortex):
    cortex.log.drain_per_read = 0  # a backlog that never drains
    engine = cortex_engine(cortex_url, "enrich_wait=0.4&enrich_poll=0.05")

    async def build() -> float:
        await engine.ingest("t", MemoryItem(id="d", text="Grace owns the rota."))
        started = time.monotonic()
        await engine.build_beliefs("t")
        await engine.close()
        return time.monotonic() - started

    assert 0.35 < run(build()) < 3


def test_a_write_retried_after_a_timeout_is_stored_once(cortex_url, cortex):
    engine = cortex_engine(cortex_url, "timeout=0.3")

    async def write() -> None:
        await engine.ready()
        cortex.wire.inject(Fault(0, delay=0.6, path="/v1/experience"))
        await engine.ingest("t", MemoryItem(id="d", text="Grace owns the rota."))
        await engine.close()

    run(write())
    sent = bodies(cortex, "/v1/experience")
    assert len(sent) == 2 and sent[0] == sent[1]  # the same body, so the same key
    assert len(cortex.log.events) == 1


def test_402_stops_the_run_as_credits_exhausted(cortex_url, cortex):
    engine = cortex_engine(cortex_url)
    cortex.wire.inject(Fault(402, path="/v1/recall"))
    with pytest.raises(CreditsExhausted, match="402"):
        run(engine.query("t", "anything"))


def test_preflight_names_the_variable_of_a_refused_key(cortex, monkeypatch):
    monkeypatch.setenv("CORTEX_API_KEY", "not-the-key")
    with running(cortex.app()) as url:
        engine = cortex_engine(url)
        with pytest.raises(AuthRejected) as caught:
            run(engine.preflight())
    assert "CORTEX_API_KEY" in caught.value.fix and "not-the-key" not in caught.value.render()
    assert [s.path for s in cortex.wire.seen] == ["/v1/auth/whoami"]


def test_a_scope_the_service_would_refuse_is_never_sent(monkeypatch):
    monkeypatch.setenv("CORTEX_API_KEY", "k")
    with pytest.raises(UsageError) as caught:
        create("cortex?scope_prefix=memeval")  # a bare word is not `type:id`
    assert "CORTEX_SCOPE_PREFIX" in caught.value.fix
    with pytest.raises(UsageError, match="not one CortexDB admits"):
        create("cortex?scope_prefix=tm:memeval")
    assert tenant_id("r1-lifecycle.x_y-0.main") == "r1-lifecycle_2ex_5fy-0_2emain"
    assert tenant_id("a.b") != tenant_id("a_2eb")  # escapes never collide
