"""mem0's own clients (`mem0ai`'s MemoryClient and AsyncMemoryClient) against the fake.

A fake the official client cannot use is wrong, so every route memeval's adapter relies on is
driven here through the SDK first: the ping on construction, v3 add with event polling, v3
search and paged listing with ids inside `filters`, delete-all, and the SDK's own reading of
401, 400, 429 with Retry-After, 5xx and timeouts.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

# mem0 reads these once, at import: no telemetry to a hosted service, no writes to ~/.mem0.
# The tests import it themselves: it takes seconds, which collection (once per xdist worker)
# would otherwise pay even when no test here runs.
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-contract-"))

from tests.adapters.fake_mem0 import MEM0_KEY, FakeMem0
from tests.adapters.fakes import Fault, running

if TYPE_CHECKING:
    from mem0 import MemoryClient


@pytest.fixture
def fake() -> Iterator[tuple[FakeMem0, str]]:
    server = FakeMem0()
    with running(server.app()) as url:
        yield server, url


def settle(client: MemoryClient, event_id: str) -> dict:
    """Poll the event the way mem0's integrations do, until it is terminal."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        event = client.client.get(f"/v1/event/{event_id}/").json()
        if event["status"] in ("SUCCEEDED", "FAILED"):
            return event
        time.sleep(0.02)
    raise AssertionError(f"event {event_id} never finished")


def test_the_client_pings_on_construction_and_a_refused_key_fails_there(fake):
    from mem0 import MemoryClient

    server, url = fake
    MemoryClient(api_key=MEM0_KEY, host=url)
    assert server.wire.calls("/v1/ping/", "GET")[-1].headers["authorization"] == f"Token {MEM0_KEY}"
    with pytest.raises(ValueError, match="Invalid API key"):
        MemoryClient(api_key="m0-wrong", host=url)


def test_a_queued_add_is_searchable_once_its_event_succeeds(fake):
    from mem0 import MemoryClient

    server, url = fake
    client = MemoryClient(api_key=MEM0_KEY, host=url)
    added = client.add("Grace owns the on-call rota.", user_id="alice", metadata={"source": "wiki"})
    assert added["status"] == "PENDING" and added["event_id"]
    body = server.wire.calls("/v3/memories/add/")[-1].body
    assert b'"user_id":"alice"' in body.replace(b" ", b"")  # entity ids at the top level on add
    event = settle(client, added["event_id"])
    assert event["status"] == "SUCCEEDED" and event["results"][0]["event"] == "ADD"
    memory_id = event["results"][0]["id"]

    found = client.search("who owns the rota", filters={"user_id": "alice"}, top_k=3)
    assert [m["id"] for m in found["results"]] == [memory_id]
    assert found["results"][0]["metadata"] == {"source": "wiki"}
    assert client.search("who owns the rota", filters={"user_id": "bob"})["results"] == []
    assert client.get(memory_id)["memory"] == "Grace owns the on-call rota."


def test_verbatim_adds_answer_with_their_memories(fake):
    from mem0 import MemoryClient

    _server, url = fake
    client = MemoryClient(api_key=MEM0_KEY, host=url)
    added = client.add([{"role": "assistant", "content": "Noted."}], user_id="u", infer=False)
    assert added["results"][0]["data"]["memory"] == "Noted." and "event_id" not in added


def test_ids_outside_filters_are_refused_by_the_sdk_and_by_the_service(fake):
    from mem0 import MemoryClient
    from mem0.exceptions import ValidationError

    server, url = fake
    client = MemoryClient(api_key=MEM0_KEY, host=url)
    with pytest.raises(ValueError, match="filters"):
        client.search("x", user_id="alice")
    with pytest.raises(ValidationError):
        client.search("x", filters={})  # sent, and refused by the service
    with pytest.raises(ValidationError):
        client.search("x", filters={"NOT": [{"user_id": "alice"}]})  # no positive scope
    assert len(server.wire.calls("/v3/memories/search/")) == 2


def test_the_listing_pages_until_next_is_null(fake):
    from mem0 import MemoryClient

    _server, url = fake
    client = MemoryClient(api_key=MEM0_KEY, host=url)
    for i in range(5):
        client.add(f"fact number {i}", user_id="pager", infer=False)
    first = client.get_all(filters={"user_id": "pager"}, page=1, page_size=2)
    assert first["count"] == 5 and len(first["results"]) == 2 and first["next"]
    seen = [m["memory"] for m in first["results"]]
    page = 2
    while True:
        more = client.get_all(filters={"AND": [{"user_id": "pager"}]}, page=page, page_size=2)
        seen += [m["memory"] for m in more["results"]]
        if not more["next"]:
            break
        page += 1
    assert seen == [f"fact number {i}" for i in range(5)]
    assert "session_id" in first["results"][0]  # the listing's name for the run


def test_delete_all_needs_a_filter_and_is_queued(fake):
    from mem0 import MemoryClient
    from mem0.exceptions import ValidationError

    server, url = fake
    client = MemoryClient(api_key=MEM0_KEY, host=url)
    client.add("to be forgotten", user_id="gone", infer=False)
    queued = client.delete_all(user_id="gone")
    assert "event_id" in queued
    settle(client, queued["event_id"])
    assert client.get_all(filters={"user_id": "gone"})["count"] == 0
    with pytest.raises(ValidationError):
        client.delete_all()
    assert server.wire.calls("/v1/memories/", "DELETE")


def test_the_sdk_reads_the_fakes_errors(fake):
    from mem0 import MemoryClient
    from mem0.exceptions import (
        AuthenticationError,
        NetworkError,
        RateLimitError,
    )
    from mem0.exceptions import MemoryError as Mem0Error

    server, url = fake
    client = MemoryClient(api_key=MEM0_KEY, host=url)
    server.wire.inject(Fault(429, retry_after="7", path="/search/"))
    with pytest.raises(RateLimitError) as limited:
        client.search("x", filters={"user_id": "u"})
    assert limited.value.debug_info["retry_after"] == 7
    server.wire.inject(Fault(503, path="/search/"))
    with pytest.raises(NetworkError):
        client.search("x", filters={"user_id": "u"})
    server.wire.inject(Fault(500, path="/search/"))
    with pytest.raises(Mem0Error):
        client.search("x", filters={"user_id": "u"})
    server.wire.inject(Fault(401, body={"detail": "key revoked"}, path="/add/"))
    with pytest.raises(AuthenticationError):
        client.add("x", user_id="u")
    slow = MemoryClient(api_key=MEM0_KEY, host=url, client=httpx.Client(timeout=0.2))
    server.wire.inject(Fault(0, delay=1.0, path="/search/"))
    with pytest.raises(NetworkError) as timed_out:
        slow.search("x", filters={"user_id": "u"})
    assert timed_out.value.error_code == "NET_TIMEOUT"


def test_the_async_client_adds_searches_and_forgets(fake):
    from mem0 import AsyncMemoryClient

    _server, url = fake

    async def calls() -> tuple[list, list]:
        async with AsyncMemoryClient(api_key=MEM0_KEY, host=url) as client:
            added = await client.add("Ada prefers tea.", user_id="ada", infer=False)
            found = await client.search("what does Ada prefer", filters={"user_id": "ada"})
            await client.delete_all(user_id="ada")
            await asyncio.sleep(0.1)
            left = await client.get_all(filters={"user_id": "ada"})
            return [r["id"] for r in added["results"]], [found["results"], left["results"]]

    ids, (found, left) = asyncio.run(calls())
    assert [m["id"] for m in found] == ids and left == []
