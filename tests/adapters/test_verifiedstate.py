"""VerifiedState's MCP tools: the fake held to what is published, then memeval's adapter on it.

VerifiedState ships no client library, so the contract half drives the fake with the MCP
protocol's own client (`mcp`) and with the bare JSON-RPC request VerifiedState's published
plugin hook sends; the adapter half runs memeval's engine, and the full built-in suite,
against the same server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from memeval.engines.adapters.transport import RemoteError
from memeval.engines.registry import describe
from memeval.errors import AuthRejected, CreditsExhausted, EngineRefused, Unsupported
from memeval.results import CaseStatus
from memeval.suites.fixture import Assertion, Span
from tests.adapters.builtin_suite import run_builtin_suite
from tests.adapters.conftest import engine_at, run
from tests.adapters.fake_verifiedstate import NAMESPACE, VS_KEY, FakeVerifiedState
from tests.adapters.fakes import Fault, running

FIRST = Assertion(
    id="plan-1",
    text="Acme is on the Free plan.",
    source="crm",
    valid_from=datetime(2026, 1, 1, tzinfo=UTC),
    valid_to=datetime(2026, 6, 1, tzinfo=UTC),
)
SECOND = Assertion(
    id="plan-2",
    text="Acme is on the Enterprise plan.",
    source="billing",
    supersedes="plan-1",
    excerpt="Upgrade: Acme is on the Enterprise plan.",
    span=Span(start=9, end=40),
    valid_from=datetime(2026, 6, 1, tzinfo=UTC),
)
PUBLISHED_TOOLS = {"memory_ingest", "memory_query", "memory_verify", "memory_health"}


@pytest.fixture
def vs(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeVerifiedState, str]]:
    fake = FakeVerifiedState()
    monkeypatch.setenv("VERIFIEDSTATE_API_KEY", VS_KEY)
    monkeypatch.setenv("VERIFIEDSTATE_NAMESPACE_ID", NAMESPACE)
    with running(fake.app()) as url:
        yield fake, url + "/mcp"


# ---- the fake against published material --------------------------------------------------


def test_the_mcp_client_lists_the_published_tools_and_runs_the_pipeline(vs):
    import httpx2  # with mcp, imported here: collection (once per xdist worker) skips them
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    _fake, url = vs

    async def calls():
        headers = {"Authorization": f"Bearer {VS_KEY}"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            names = {t.name for t in (await client.list_tools()).tools}
            ingested = await client.call_tool(
                "memory_ingest", {"content": "Alice prefers dark mode.", "source_type": "chat"}
            )
            assertion = ingested.structured_content["assertion_ids"][0]
            receipt = await client.call_tool("memory_verify", {"assertion_id": assertion})
            found = await client.call_tool(
                "memory_query", {"query_text": "what theme does Alice prefer?"}
            )
            missing = await client.call_tool("memory_verify", {"assertion_id": "as_nope"})
            return names, ingested, receipt, found, missing

    names, ingested, receipt, found, missing = run(calls())
    assert names == PUBLISHED_TOOLS
    assert {"artifact_id", "span_count", "r2_stored"} <= set(ingested.structured_content)
    assert {"receipt_id", "status", "final_confidence", "conflicts_found"} <= set(
        receipt.structured_content
    )
    assert {"assertions", "receipts", "total"} <= set(found.structured_content)
    assert found.structured_content["total"] == 1
    assert missing.is_error


def test_the_plugins_bare_tools_call_is_answered_with_json_in_text_blocks(vs):
    _fake, url = vs
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_ingest", "arguments": {"content": "x", "metadata": {"a": 1}}},
    }
    headers = {
        "Authorization": f"Bearer {VS_KEY}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    answered = httpx.post(url, json=call, headers=headers)
    assert answered.status_code == 200
    text = answered.json()["result"]["content"][0]["text"]
    assert '"artifact_id"' in text
    refused = httpx.post(url, json=call, headers={**headers, "Authorization": "Bearer vs_live_x"})
    assert refused.status_code == 401


# ---- memeval's adapter ----------------------------------------------------------------------


def test_assertions_go_in_with_their_hints_and_come_back_with_spans_and_sources(vs):
    fake, url = vs
    engine = engine_at("verifiedstate", url)

    async def calls():
        await engine.store("t", FIRST)
        await engine.store("t", SECOND)
        now = await engine.query("t", "Which plan is Acme on?")
        march = datetime(2026, 3, 1, tzinfo=UTC)
        then = await engine.query_at("t", "Which plan is Acme on?", march)
        conflicts = await engine.conflicts("t", "plan-1")
        await engine.close()
        return now, then, conflicts

    now, then, conflicts = run(calls())
    stored = {a["metadata"]["memeval_id"]: a for a in fake.assertions.values()}
    assert stored["plan-2"]["supersedes"] == stored["plan-1"]["assertion_id"]  # our ids, theirs
    assert len(fake.receipts) == 2 + 1  # one per stored assertion, one for the conflict check
    assert [h.assertion_id for h in now.hits] == ["plan-2"]
    assert now.hits[0].source == "billing" and now.hits[0].span.text == SECOND.excerpt[9:40]
    assert [h.assertion_id for h in then.hits] == ["plan-1"]
    assert conflicts[0].ids == ["plan-1", "plan-2"] and conflicts[0].resolved_to == "plan-2"
    assert all(s.headers["authorization"] == f"Bearer {VS_KEY}" for s in fake.wire.seen)


def test_another_tenants_assertions_never_reach_the_hits(vs):
    _fake, url = vs
    engine = engine_at("verifiedstate", url)

    async def calls():
        await engine.store("a", FIRST)
        found = await engine.query("b", "Which plan is Acme on?")
        await engine.close()
        return found

    assert run(calls()).hits == []


def test_preflight_names_the_variable_for_a_refused_key(vs, monkeypatch):
    _fake, url = vs
    monkeypatch.setenv("VERIFIEDSTATE_API_KEY", "vs_live_wrong")
    with pytest.raises(AuthRejected) as refused:
        run(engine_at("verifiedstate", url).preflight())
    assert "VERIFIEDSTATE_API_KEY" in refused.value.fix
    assert "vs_live_wrong" not in str(refused.value)


def test_a_402_stops_the_run_and_a_tool_error_is_a_scored_failure(vs):
    fake, url = vs
    engine = engine_at("verifiedstate", url)
    blank = FIRST.model_copy(update={"text": " ", "excerpt": " "})

    async def calls():
        await engine.preflight()
        fake.wire.inject(Fault(402, body={"error": "credits exhausted"}))
        with pytest.raises(CreditsExhausted):
            await engine.store("t", FIRST)
        with pytest.raises(RemoteError, match="memory_ingest failed"):
            await engine.store("t", blank)
        await engine.close()

    run(calls())


def test_faults_are_retried_and_a_write_applied_twice_is_one_hit(vs):
    """The timed-out ingest is applied once its slow reply is lost. VerifiedState publishes no
    idempotency key, so its ledger holds that write twice; the query still shows it once."""
    fake, url = vs
    engine = engine_at("verifiedstate", url, "timeout=0.5")

    async def calls():
        await engine.preflight()
        fake.wire.inject(Fault(429, retry_after="0.1"), Fault(503), Fault(0, delay=1.0))
        await engine.store("t", FIRST)
        deadline = time.monotonic() + 10
        while len(fake.assertions) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)  # the slow ingest lands after its retry
        found = await engine.query("t", "Acme plan")
        await engine.close()
        return found

    found = run(calls())
    assert [a["claim"] for a in fake.assertions.values()] == [FIRST.text] * 2
    assert [hit.text for hit in found.hits] == [FIRST.text]


def test_a_server_without_as_of_reports_point_in_time_unsupported(vs):
    _fake, url = vs
    engine = engine_at("verifiedstate", url)

    async def calls():
        await engine.preflight()
        engine._schemas["memory_query"].discard("as_of")  # a server whose schema lacks it
        try:
            await engine.query_at("t", "Acme", datetime(2026, 1, 2, tzinfo=UTC))
        finally:
            await engine.close()

    with pytest.raises(Unsupported):
        run(calls())


def test_the_full_built_in_suite_completes_with_lifecycle_unsupported(vs):
    _fake, url = vs
    results = run_builtin_suite(engine_at("verifiedstate", url), "vs-suite")
    assert len(results) == 66 and all(r.status is CaseStatus.done for r in results)
    scenarios = [r for r in results if r.kind == "scenario"]
    assert all((r.error or "").startswith("unsupported") for r in scenarios)
    fixtures = [r for r in results if r.kind == "fixture"]
    assert all(r.checks for r in fixtures) and any(c.ok for r in fixtures for c in r.checks)


def test_engines_listing_marks_verifiedstate_as_published_docs_only():
    row = next(r for r in describe() if r.name == "verifiedstate")
    assert row.verified_against == "published docs only"


# ---- the variants its sources allow (SOURCES.md) -------------------------------------------


@pytest.mark.parametrize(
    ("legacy", "id_field"),
    [(False, "assertion_id"), (True, "assertion_id"), (False, "id"), (True, "id")],
    ids=["discover-assertion_id", "legacy-assertion_id", "discover-id", "legacy-id"],
)
def test_every_variant_stores_and_finds_with_the_namespace_header(monkeypatch, legacy, id_field):
    """An older MCP server answers `server/discover` with HTTP 400: the client falls back to
    `initialize` (before, the bridge raised and preflight failed); results may name an
    assertion `id` (before, a KeyError of the reply, scored as a miss)."""
    fake = FakeVerifiedState(legacy=legacy, id_field=id_field)
    monkeypatch.setenv("VERIFIEDSTATE_API_KEY", VS_KEY)
    monkeypatch.setenv("VERIFIEDSTATE_NAMESPACE_ID", NAMESPACE)
    with running(fake.app()) as url:
        engine = engine_at("verifiedstate", url + "/mcp")

        async def calls():
            await engine.preflight()
            await engine.store("t", FIRST)
            found = await engine.query("t", "Which plan is Acme on?")
            await engine.close()
            return found

        found = run(calls())
    assert [h.assertion_id for h in found.hits] == ["plan-1"]
    assert all(s.headers.get("x-namespace-id") == NAMESPACE for s in fake.wire.seen)
    probes = [s for s in fake.wire.seen if b'"server/discover"' in s.body]
    assert len(probes) == 1  # probed once; the answer (or its absence) is remembered


def test_a_query_reply_without_its_assertions_is_an_error_not_an_empty_answer(monkeypatch):
    fake = FakeVerifiedState(query_lacks="assertions")
    monkeypatch.setenv("VERIFIEDSTATE_API_KEY", VS_KEY)
    with running(fake.app()) as url:
        engine = engine_at("verifiedstate", url + "/mcp")

        async def calls() -> None:
            await engine.store("t", FIRST)
            with pytest.raises(EngineRefused, match="assertions"):
                await engine.query("t", "Which plan is Acme on?")
            await engine.close()

        run(calls())
