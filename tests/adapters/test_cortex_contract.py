"""CortexDB's own SDK (`cortexdbai`) against the fake CortexDB the `cortex` adapter is tested
on: if the vendor's client cannot use the fake, the fake is wrong, and so would be every
adapter test built on it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.adapters.fake_cortex import CALLER, KEY, FakeCortex
from tests.adapters.fakes import running

if TYPE_CHECKING:
    from cortexdb import Cortex

SCOPE = "app:memeval/ws:contract"


@pytest.fixture
def fake() -> FakeCortex:
    return FakeCortex()


@pytest.fixture
def sdk(fake: FakeCortex) -> Iterator[Cortex]:
    # The SDK is imported where it is used: collection (once per xdist worker) skips it.
    from cortexdb import Cortex

    with running(fake.app()) as url, Cortex(url, actor=CALLER, bearer=KEY, timeout=5) as client:
        yield client


def test_whoami_names_the_caller_and_version_lists_capabilities(sdk):
    assert sdk.whoami()["caller"] == CALLER
    assert isinstance(sdk.capabilities(), list)


def test_a_write_is_recalled_listed_twice_and_forgotten_by_id(sdk):
    ack = sdk.experience(SCOPE, text="Priya at Acme signed for 200 seats.", wait="indexed")
    assert ack["event_id"] and ack["replayed_from_idempotency"] is False
    pack = sdk.recall(SCOPE, query="How many seats did Acme sign for?")
    assert [e["id"] for e in pack["layers"]["events"]] == [ack["event_id"]]
    assert pack["context_block"] == "[user] Priya at Acme signed for 200 seats."
    listed = sdk.events(SCOPE)
    assert [e["id"] for e in listed["items"]] == [ack["event_id"]] * 2  # every event twice
    assert listed["has_more"] is False
    done = sdk.forget(SCOPE, memory_ids=[ack["event_id"]])
    assert done["deleted"] == {"events": 1}
    assert sdk.events(SCOPE)["items"] == []


def test_an_accepted_write_is_not_readable_at_once(sdk):
    sdk.experience(SCOPE, text="Grace owns the rota.")  # no wait: accepted, not indexed
    assert sdk.events(SCOPE)["items"] == []
    assert len(sdk.events(SCOPE)["items"]) == 2


def test_paging_follows_the_cursor_and_limit_counts_the_copies(sdk):
    sdk.experience_bulk(SCOPE, [{"text": f"note {n}"} for n in range(3)], wait="indexed")
    first = sdk.events(SCOPE, limit=4)
    assert len(first["items"]) == 4 and first["has_more"]
    rest = sdk.events(SCOPE, limit=4, cursor=first["next_cursor"])
    assert len(rest["items"]) == 2 and not rest["has_more"]
    texts = [e["content"]["text"] for e in first["items"] + rest["items"]]
    assert texts == ["note 2", "note 2", "note 1", "note 1", "note 0", "note 0"]  # newest first


def test_a_replayed_key_stores_once_and_another_body_under_it_is_refused(sdk, fake):
    from cortexdb import V1APIError

    first = sdk.experience(SCOPE, text="Acme renews in May.", idempotency_key="k-1")
    again = sdk.experience(SCOPE, text="Acme renews in May.", idempotency_key="k-1")
    assert again == {**first, "replayed_from_idempotency": True}
    with pytest.raises(V1APIError) as caught:
        sdk.experience(SCOPE, text="Acme renews in June.", idempotency_key="k-1")
    assert (caught.value.status, caught.value.error_code) == (409, "IDEMPOTENCY_CONFLICT")
    assert len(fake.log.events) == 1


def test_a_triple_write_is_taken_and_recall_honours_budgets_filters_and_time(sdk):
    triple = {
        "subject": {"type": "literal", "datatype": "string", "value": "Acme"},
        "predicate": "billing_contact",
        "object": {"type": "literal", "datatype": "string", "value": "Dana"},
    }
    sdk.experience(SCOPE, triple=triple, wait="indexed")
    old = sdk.experience(
        SCOPE, text="Acme pays by card.", labels=["src:crm"], observed_at="2024-01-05T00:00:00Z"
    )
    sdk.experience(SCOPE, text="Acme pays by invoice.", observed_at="2025-03-01T00:00:00Z")
    sdk.events(SCOPE)  # the accepted writes become readable
    labelled = sdk.recall(
        SCOPE, query="How does Acme pay?", filters={"metadata": {"labels": ["src:crm"]}}
    )
    assert [e["id"] for e in labelled["layers"]["events"]] == [old["event_id"]]
    earlier = sdk.recall(
        SCOPE,
        query="How does Acme pay?",
        temporal={"valid_during": "2024-01-01T00:00:00Z..2024-12-31T00:00:00Z"},
    )
    assert [e["content"]["text"] for e in earlier["layers"]["events"]] == ["Acme pays by card."]
    one = sdk.recall(SCOPE, query="Acme pays", budgets={"per_layer_limits": {"events": 1}})
    assert len(one["layers"]["events"]) == 1


def test_unknown_fields_are_refused_with_the_error_envelope(sdk):
    from cortexdb import V1APIError

    with pytest.raises(V1APIError) as caught:
        sdk.recall(SCOPE, query="x", filters={"metadata": {"colour": "red"}})
    assert (caught.value.status, caught.value.error_code) == (422, "INVALID_BODY")
    with pytest.raises(V1APIError) as caught:
        sdk._post("/v1/recall", {"scope": SCOPE, "query": "x", "k": 5})  # an old guess
    assert caught.value.error_code == "INVALID_BODY" and "k" in caught.value.message
    envelope = {"scope": SCOPE, "kind": "turn", "text": "x", "idempotency_key": "k"}
    with pytest.raises(V1APIError) as caught:
        sdk._post("/v1/experience", envelope)
    assert caught.value.status == 422


def test_forget_is_refused_without_a_selector_and_with_two(sdk):
    from cortexdb import V1APIError

    with pytest.raises(V1APIError) as caught:
        sdk.forget(SCOPE)
    assert (caught.value.status, caught.value.error_code) == (
        422,
        "EMPTY_SELECTOR_WITHOUT_CONFIRMATION",
    )
    with pytest.raises(V1APIError) as caught:
        sdk._post(
            "/v1/forget", {"scope": SCOPE, "confirm_all": True, "selector": {"memory_ids": ["e"]}}
        )
    assert caught.value.error_code == "AMBIGUOUS_SELECTOR_CONFIRM_ALL"


def test_an_unregistered_scope_type_is_refused(sdk):
    from cortexdb import V1APIError

    with pytest.raises(V1APIError) as caught:
        sdk.experience("tm:memeval/ws:x", text="hello")
    assert caught.value.error_code == "UNREGISTERED_SCOPE_TYPE"


def test_beliefs_build_from_enriched_facts_and_usage_reports_the_backlog(sdk, fake):
    fake.log.drain_per_read = 1
    for text in ("Acme is on the Enterprise plan.", "Grace owns the rota."):
        sdk.experience(SCOPE, text=text, wait="indexed")
    assert sdk.build_beliefs(SCOPE)["built"] == 0  # nothing extracted yet
    usage = sdk._get("/v1/admin/usage")
    assert usage["enrichment_backlog"] == {"jobs_pending": 1, "jobs_queued_total": 2}
    assert usage["total"]["calls"] == 102 and usage["total"]["cost_usd"] == pytest.approx(0.0102)
    sdk._get("/v1/admin/usage")
    assert sdk.build_beliefs(SCOPE)["built"] == 2
    assert len(sdk.beliefs(SCOPE)["items"]) == 2 and len(sdk.facts(SCOPE)["items"]) == 2
    pack = sdk.recall(SCOPE, query="Which plan?", budgets={"per_layer_limits": {"beliefs": 4}})
    assert [b["claim"]["object"]["value"] for b in pack["layers"]["beliefs"]] == [
        "Acme is on the Enterprise plan."
    ]


def test_a_wrong_key_or_actor_is_an_auth_error(fake):
    from cortexdb import Cortex, V1AuthError

    with running(fake.app()) as url:
        with Cortex(url, actor=CALLER, bearer="not-the-key") as wrong, pytest.raises(V1AuthError):
            wrong.whoami()
        with (
            Cortex(url, actor="user:mallory", bearer=KEY) as other,
            pytest.raises(V1AuthError) as caught,
        ):
            other.events(SCOPE)
    assert caught.value.error_code == "ACTOR_MISMATCH"


# ---- the SDK against each variant the fake serves (SOURCES.md) ----------------------------


def test_the_sdk_passes_the_variants_that_refuse_what_it_never_sends():
    """A minted token with the right actor, enforced diagnostics and the API reference's event
    shape: the vendor's own client works against each, so the fake's refusals hit only what
    the SDK never does."""
    from cortexdb import Cortex

    fake = FakeCortex(token="minted", diagnostics_enforced=True, event_shape="top_level")
    with running(fake.app()) as url, Cortex(url, actor=CALLER, bearer=KEY, timeout=5) as sdk:
        assert sdk.whoami()["caller"] == CALLER
        ack = sdk.experience(SCOPE, text="Grace owns the rota.", wait="indexed")
        pack = sdk.recall(SCOPE, query="Who owns the rota?")  # diagnostics "none" by default
        listed = sdk.events(SCOPE)["items"]
    assert pack["layers"]["events"][0]["event_id"] == ack["event_id"]
    assert listed[0]["event_id"] == ack["event_id"] and "labels" in listed[0]


def test_the_sdk_is_refused_by_a_minted_token_under_another_actor():
    from cortexdb import Cortex
    from cortexdb.v1.exceptions import V1AuthError

    fake = FakeCortex(token="minted")
    with (
        running(fake.app()) as url,
        Cortex(url, bearer=KEY, timeout=5) as sdk,  # the SDK's default actor, user:default
        pytest.raises(V1AuthError),
    ):
        sdk.whoami()
