"""Supermemory: its official SDK against the fake (a fake the SDK cannot use is wrong), then
memeval's `supermemory` adapter against the same fake: tenants, settling, each turn stored once,
every error the brief names, the built-in suite and a LoCoMo-shaped conversation."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memeval.engines.adapters.transport import RemoteError
from memeval.engines.idempotency import write_key
from memeval.engines.registry import describe
from memeval.engines.types import MemoryItem, TurnContext
from memeval.errors import AuthRejected, CreditsExhausted, EngineUnavailable, UsageError
from memeval.results import CaseStatus
from tests.adapters.builtin_suite import every_case_done, run_builtin_suite
from tests.adapters.conftest import engine_at, run
from tests.adapters.fake_supermemory import SUPERMEMORY_KEY, FakeSupermemory
from tests.adapters.fakes import Fault, running
from tests.adapters.hosted_cases import (
    FIRST,
    history,
    locomo_through,
    turn,
    written_twice,
)

QUICK = "poll=0.01&settle_wait=5"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeSupermemory, str]]:
    server = FakeSupermemory()
    monkeypatch.setenv("SUPERMEMORY_API_KEY", SUPERMEMORY_KEY)
    with running(server.app()) as url:
        yield server, url


def adds(server: FakeSupermemory) -> list:
    return [s for s in server.wire.seen if s.method == "POST" and s.path.endswith("/document")]


def sdk(url: str, **kwargs):
    from supermemory import Supermemory

    return Supermemory(api_key=SUPERMEMORY_KEY, base_url=url, **kwargs)


def settled(client, namespace: str, doc_id: str) -> str:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        status = client.documents.get(namespace, doc_id).system.status
        if status in ("done", "failed"):
            return status
        time.sleep(0.02)
    raise AssertionError(f"{doc_id} never finished")


# ---- the vendor's SDK against the fake ------------------------------------------------------


def test_sdk_adds_searches_lists_and_deletes_a_namespace(fake):
    server, url = fake
    client = sdk(url)
    ref = client.add(
        "alice", content="Grace owns the on-call rota.", id="d1", metadata={"src": "wiki"}
    )
    assert ref.id == "d1" and ref.status == "queued"
    assert server.wire.calls("/ns/alice/document")[-1].headers["authorization"] == (
        f"Bearer {SUPERMEMORY_KEY}"
    )
    assert settled(client, "alice", "d1") == "done"
    found = client.search("alice", query="who owns the rota", search_mode="hybrid", limit=5)
    assert {r.memory or r.chunk for r in found.results} == {"Grace owns the on-call rota."}
    assert all(r.metadata == {"src": "wiki"} for r in found.results)
    assert client.search("bob", query="who owns the rota").results == []
    listed = client.list("alice", "documents", page=1, limit=10)
    assert [d.id for d in listed.documents] == ["d1"] and listed.pagination.total_items == 1
    gone = client.namespaces.delete("alice")
    assert gone.status == "deleted" and gone.deleted_documents_count == 1


def test_sdk_same_id_same_content_is_a_duplicate_new_content_appends(fake):
    _server, url = fake
    client = sdk(url)
    client.add("u", content="first", id="conv")
    settled(client, "u", "conv")
    assert client.add("u", content="first", id="conv").status == "done"  # unchanged duplicate
    assert client.add("u", content="second", id="conv").status == "queued"
    settled(client, "u", "conv")
    assert client.documents.get("u", "conv").content == "first\nsecond"
    assert client.list("u", "documents").pagination.total_items == 1


def test_sdk_reads_the_fakes_errors(fake):
    from supermemory import Supermemory
    from supermemory._compat import APITimeoutError
    from supermemory.core.api_error import ApiError
    from supermemory.errors import (
        BadRequestError,
        NotFoundError,
        PaymentRequiredError,
        UnauthorizedError,
    )

    server, url = fake
    client = sdk(url, max_retries=0)
    with pytest.raises(UnauthorizedError):
        Supermemory(api_key="wrong", base_url=url).search("u", query="x")
    with pytest.raises(BadRequestError):
        client.add("u", content="")
    with pytest.raises(NotFoundError):
        client.documents.get("u", "nope")
    server.wire.inject(Fault(402, body={"error": "Out of credits"}, path="/document"))
    with pytest.raises(PaymentRequiredError) as paid:
        client.add("u", content="x")
    assert paid.value.status_code == 402
    server.wire.inject(Fault(429, retry_after="7", path="/search"))
    with pytest.raises(ApiError) as limited:
        client.search("u", query="x")
    assert limited.value.status_code == 429 and limited.value.headers["retry-after"] == "7"
    server.wire.inject(Fault(503, path="/search"), Fault(429, retry_after="0", path="/search"))
    sdk(url, max_retries=2).search("u", query="x")  # the SDK retries both, then succeeds
    slow = sdk(url, max_retries=0, timeout=0.2)
    server.wire.inject(Fault(0, delay=1.0, path="/search"))
    with pytest.raises(APITimeoutError):
        slow.search("u", query="x")


def test_async_sdk_round_trip(fake):
    from supermemory import AsyncSupermemory

    _server, url = fake

    async def calls():
        client = AsyncSupermemory(api_key=SUPERMEMORY_KEY, base_url=url)
        await client.add("ada", content="Ada prefers tea.", id="t1")
        await asyncio.sleep(0.1)
        found = await client.search("ada", query="what does Ada prefer")
        await client.namespaces.delete("ada")
        return found

    assert run(calls()).results


# ---- memeval's adapter against the same fake -------------------------------------------------


def test_adapter_scopes_tenants_to_namespaces_and_waits_for_done(fake):
    server, url = fake
    server.delay = 0.2
    engine = engine_at("supermemory", url, QUICK)

    async def calls():
        with write_key("run/case:0"):
            await engine.store("t.a", FIRST)
        found = await engine.query("t.a", "Acme plan")
        other = await engine.query("t.b", "Acme plan")
        await engine.close()
        return found, other

    found, other = run(calls())
    added = json.loads(adds(server)[0].body)
    assert adds(server)[0].path == "/ns/t_2ea/document"
    assert added["metadata"]["memeval_write"] == "run/case:0" and added["id"].startswith("mw-")
    assert len(server.wire.calls("/document/mw-", "GET")) >= 2  # polled while queued
    assert found.hits[0].assertion_id == "plan-1" and found.hits[0].source == "crm"
    assert len(found.hits) == 1  # the memory and the chunk of one write show once
    assert other.hits == []


def test_a_history_stores_each_turn_once_under_its_own_id(fake):
    server, url = fake
    engine = engine_at("supermemory", url, QUICK)
    turns = history(3)

    ids, again, listed = written_twice(engine, turns)
    assert ids == again == ["run/case:4/t0", "run/case:4/t1", "run/case:4/t2"]
    assert sorted(listed) == ids
    assert len(server.documents()) == 3  # six requests, three documents


def test_lifecycle_lists_only_done_documents_and_forget_deletes_the_namespace(fake):
    server, url = fake
    server.delay = 0.3
    server.fail_next = 1
    engine = engine_at("supermemory", url, QUICK)

    async def calls():
        lost = await engine.ingest("t", MemoryItem(id="d0", text="A broken upload."))
        kept = await engine.ingest("t", MemoryItem(id="d1", text="Grace owns the rota."))
        early = await engine.list("t")
        await asyncio.sleep(0.4)
        listed = await engine.list("t")
        ctx = TurnContext(agent="a", thread="x", turn=turn("Who owns the rota?"), log=False)
        pack = await engine.pre_turn("t", ctx)
        await engine.forget("t")
        await engine.forget("never-written")  # 404: nothing to delete
        await engine.close()
        return lost, kept, early, listed, pack

    lost, kept, early, listed, pack = run(calls())
    assert early == [] and listed == [kept] and lost not in listed
    assert "Grace owns the rota." in pack.markdown
    assert len(adds(server)) == 2  # the probe was not logged
    assert server.spaces == {}


def test_errors_401_402_404_429_5xx_and_timeouts(fake, monkeypatch):
    server, url = fake
    engine = engine_at("supermemory", url, QUICK + "&timeout=0.5")
    server.wire.inject(
        Fault(429, retry_after="0.1", path="/search"),
        Fault(502, path="/search"),
        Fault(0, delay=1.0, path="/search"),
    )
    assert run(engine.query("t", "anything")).hits == []
    assert len(server.wire.calls("/search")) == 4  # three failures retried, then answered
    server.wire.inject(*[Fault(503, path="/search")] * 4)
    with pytest.raises(EngineUnavailable):
        run(engine_at("supermemory", url, QUICK).query("t", "x"))
    server.wire.inject(Fault(402, body={"error": "Out of credits"}, path="/document"))
    with pytest.raises(CreditsExhausted):
        run(engine_at("supermemory", url, QUICK).ingest("t", MemoryItem(id="d", text="x")))
    server.wire.inject(Fault(404, body={"error": "Document not found"}, path="/document/"))
    with pytest.raises(RemoteError):  # a refused read is the case's error, never a score
        run(engine_at("supermemory", url, QUICK).store("t", FIRST))
    monkeypatch.setenv("SUPERMEMORY_API_KEY", "sm-wrong")
    with pytest.raises(AuthRejected) as refused:
        run(engine_at("supermemory", url).preflight())
    assert "SUPERMEMORY_API_KEY" in refused.value.fix and "sm-wrong" not in str(refused.value)


def test_preflight_passes_with_a_good_key(fake):
    server, url = fake
    run(engine_at("supermemory", url).preflight())
    assert server.wire.calls("/organization", "GET")


def test_the_full_built_in_suite_runs_with_every_case_done(fake):
    server, url = fake
    results = run_builtin_suite(engine_at("supermemory", url, QUICK), "sm-suite")
    scenarios = every_case_done(results)
    assert any(p.hit for r in scenarios for p in r.probes)
    assert server.spaces == {}  # every tenant forgotten


def test_a_locomo_conversation_stores_every_turn_once(fake, tmp_path: Path):
    server, url = fake
    result, turn_ids = locomo_through(engine_at("supermemory", url, QUICK), tmp_path)
    assert result.status is CaseStatus.done, result.error
    stored = [
        json.loads(s.body)["metadata"]["memeval_id"]
        for s in adds(server)
        if "memeval_id" in json.loads(s.body)["metadata"]
    ]
    assert sorted(stored) == sorted(turn_ids)  # every turn once, none twice


def test_engines_listing_names_supermemory_and_its_key_comes_only_from_the_environment(fake):
    _server, url = fake
    with pytest.raises(UsageError, match="secret"):
        engine_at("supermemory", url, "api_key=sm-in-a-reference")
    row = next(r for r in describe() if r.name == "supermemory")
    assert row.verified_against.startswith("supermemory 5.0.1")
    assert "lifecycle" in (row.capabilities or [])
    assert any(s.env == "SUPERMEMORY_API_KEY" and s.secret for s in row.settings)
