"""TinyHumans' own SDK (`tinyhumansai`) against the fake hosted backend the `tinyhumans` adapter
is tested on: its envelope, bearer, errors and credit refusals must be what the vendor's
client reads. The SDK speaks the document API; the hosted event routes the adapter uses share
the envelope, the bearer and the errors, and take CortexDB's own bodies (proven by
`test_cortex_contract.py` on the same log)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from tinyhumansai import TinyHumansError, TinyHumansMemoryClient

from tests.adapters.fake_tinyhumans import JWT, FakeTinyHumans
from tests.adapters.fakes import running

NAMESPACE = "memeval-contract"


@pytest.fixture
def fake() -> FakeTinyHumans:
    return FakeTinyHumans()


@pytest.fixture
def url(fake: FakeTinyHumans) -> Iterator[str]:
    with running(fake.app()) as base:
        yield base


@pytest.fixture
def sdk(url: str) -> Iterator[TinyHumansMemoryClient]:
    with TinyHumansMemoryClient(JWT, base_url=url) as client:
        yield client


def item(key: str, content: str) -> dict[str, object]:
    return {"key": key, "content": content, "namespace": NAMESPACE}


def test_writes_are_one_per_request_upserted_recalled_listed_and_deleted(sdk, fake):
    made = sdk.ingest_memories(
        items=[item("plan", "Acme is on the Free plan."), item("rota", "Grace owns the rota.")]
    )
    assert (made.ingested, made.updated) == (2, 0)
    assert len(fake.wire.calls("/memory/insert", "POST")) == 2  # one request per item
    again = sdk.ingest_memory(item=item("plan", "Acme is on the Enterprise plan."))
    assert (again.ingested, again.updated) == (0, 1)
    found = sdk.recall_memory(namespace=NAMESPACE, prompt="Which plan is Acme on?", num_chunks=3)
    assert [i.content for i in found.items] == ["Acme is on the Enterprise plan."]
    assert found.context == "Acme is on the Enterprise plan."
    listed = sdk.list_documents(namespace=NAMESPACE)
    assert {d["documentId"] for d in listed["documents"]} == {"plan", "rota"}
    assert sdk.delete_memory(namespace=NAMESPACE, delete_all=True).deleted == 2
    assert sdk.list_documents(namespace=NAMESPACE)["documents"] == []


def test_the_master_recall_shares_its_route_with_the_event_recall(sdk):
    sdk.ingest_memory(item=item("rota", "Grace owns the rota."))
    master = sdk.recall_memory_master(namespace=NAMESPACE, max_chunks=5)
    assert [i.key for i in master.items] == ["rota"]


def test_a_wrong_key_and_an_empty_account_are_refused_in_the_envelope(url, fake):
    with (
        TinyHumansMemoryClient("tiny_live_wrong", base_url=url) as wrong,
        pytest.raises(TinyHumansError) as caught,
    ):
        wrong.list_documents(namespace=NAMESPACE)
    assert caught.value.status == 401 and str(caught.value) == "sign in again"
    fake.credits = 0
    with (
        TinyHumansMemoryClient(JWT, base_url=url) as broke,
        pytest.raises(TinyHumansError) as caught,
    ):
        broke.ingest_memory(item=item("plan", "Acme is on the Free plan."))
    assert caught.value.status == 402
    assert caught.value.body["errorCode"] == "USER_INSUFFICIENT_CREDITS"


def test_event_routes_keep_the_envelope_claims_and_scope_grammar(url, fake):
    """The hosted event routes, raw: one envelope (CortexDB's body), its claim, its refusals."""
    envelope = {
        "scope": "app:memeval/ws:contract",
        "modality": "document",
        "content": {"kind": "message", "role": "user", "text": "Grace owns the rota."},
        "context": {"labels": ["mv:w:1"]},
        "idempotency_key": "mv-1",
    }
    headers = {"Authorization": f"Bearer {JWT}", "Idempotency-Key": "claim-1"}
    with httpx.Client(base_url=url, headers=headers) as http:
        first = http.post("/memory/experience", json=envelope)
        assert first.status_code == 202 and first.json()["success"] is True
        replay = http.post("/memory/experience", json=envelope)
        assert replay.status_code == 409 and replay.json()["errorCode"] == "CONFLICT"
        bulk = http.post("/memory/experience/bulk", json={"items": [envelope]})
        assert bulk.status_code == 404  # no bulk route on the hosted wire
        dotted = http.post("/memory/experience", json={**envelope, "scope": "memeval/t.1"})
        assert dotted.status_code == 400 and dotted.json()["errorCode"] == "BAD_REQUEST"
        extra = http.post("/memory/recall", json={"scope": envelope["scope"], "query": "x", "k": 3})
        assert extra.status_code == 400  # CortexDB's 422, in the backend's words
        listed = http.get("/memory/events", params={"scope": envelope["scope"]})
        listed = http.get("/memory/events", params={"scope": envelope["scope"]})
        assert [e["id"] for e in listed.json()["data"]["items"]] == ["evt_1", "evt_1"]
    assert len(fake.log.events) == 1


def test_the_sdks_recall_is_served_by_the_backend_that_takes_only_its_body():
    """The `recall_shape="sdk"` variant refuses CortexDB's body, never the SDK's own."""
    fake = FakeTinyHumans(recall_shape="sdk")
    with running(fake.app()) as base, TinyHumansMemoryClient(JWT, base_url=base) as client:
        client.ingest_memories(items=[item("rota", "Grace owns the rota.")])
        master = client.recall_memory_master(namespace=NAMESPACE, max_chunks=5)
    assert [i.content for i in master.items] == ["Grace owns the rota."]
