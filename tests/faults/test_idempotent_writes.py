"""A write whose response was lost is retried with the same `Idempotency-Key` and stored once:
by the `http` engine, which sends the key the runner gave the write, and by `memeval serve`,
which answers a repeated key with its first answer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import urlencode

import httpx
import pytest
from pydantic import SecretStr

from memeval.engines.reference import ReferenceEngine
from memeval.engines.registry import create
from memeval.engines.types import Turn
from memeval.runner import RunOptions, run_case
from memeval.runner.context import sub_tenant
from memeval.server import create_app
from memeval.stopwatch import Stopwatch
from memeval.suites.catalog import resolve
from memeval.suites.scenario import Scenario
from memeval.testing.faultproxy import Fault, FaultPlan, FaultProxy
from tests.adapters.fakes import running

TOKEN = "idempotency-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TIMEOUT = 0.3
AT = datetime(2026, 11, 2, 9, tzinfo=UTC)


@pytest.fixture
def served() -> Iterator[str]:
    with running(create_app(ReferenceEngine(), SecretStr(TOKEN))) as url:
        yield url


def reply(text: str) -> dict[str, object]:
    turn = {"role": "assistant", "text": text, "at": "2026-11-02T09:00:00Z"}
    return {"agent": "ops", "thread": "t1", "turn": turn}


def test_the_server_stores_a_repeated_key_once(served: str):
    with httpx.Client(base_url=served, headers=AUTH) as client:
        turns, memories = "/v1/tenants/t-keys/turns/post", "/v1/tenants/t-keys/memories"
        keyed = {"Idempotency-Key": "run-case-0-a0:0"}
        first = client.post(turns, json=reply("Grace owns the rota."), headers=keyed)
        again = client.post(turns, json=reply("Grace owns the rota."), headers=keyed)
        assert first.status_code == again.status_code == 200
        assert first.json() == again.json()
        assert len(client.get(memories).json()["ids"]) == 1
        other = client.post(turns, json=reply("Ada owns the rota."), headers=keyed)
        assert other.status_code == 409 and "Idempotency-Key" in other.json()["detail"]
        # Without a key the engine stores every request: the key is what held above.
        client.post(turns, json=reply("Linus owns the rota."))
        client.post(turns, json=reply("Linus owns the rota."))
        assert len(client.get(memories).json()["ids"]) == 3
        # A forgotten tenant forgets its keys: the same write made again is stored again.
        assert client.delete(memories).status_code == 204
        client.post(turns, json=reply("Grace owns the rota."), headers=keyed)
        assert len(client.get(memories).json()["ids"]) == 1


def held(url: str, tenants: list[str]) -> dict[str, int]:
    with httpx.Client(base_url=url, headers=AUTH) as client:
        return {t: len(client.get(f"/v1/tenants/{t}/memories").json()["ids"]) for t in tenants}


def test_a_scenario_whose_first_responses_are_all_lost_stores_each_write_once(
    served: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", TOKEN)
    scenario = next(
        c for c in (x.case for x in resolve("lifecycle").cases) if c.id == "lifecycle/tool_heavy"
    )
    assert isinstance(scenario, Scenario)
    drop_all = FaultPlan(
        server_error=0, throttled=0, timeout=0, drop_first_writes=1.0, hold=2 * TIMEOUT
    )
    proxy = FaultProxy(served, drop_all)

    async def play(url: str, run_id: str) -> list[str]:
        engine = create("http?" + urlencode({"url": url, "timeout": TIMEOUT, "backoff": 0.01}))
        try:
            result = await run_case(scenario, engine, run_id=run_id, options=RunOptions(keep=True))
        finally:
            await engine.close()
        assert result.status.value == "done", result.error
        return [sub_tenant(result.tenant, name) for name in scenario.tenants]

    clean = held(served, asyncio.run(play(served, "clean")))
    with proxy.running() as proxied:
        lost = held(served, asyncio.run(play(proxied, "lost")))
    assert proxy.tally.injected[Fault.dropped_write] > 20  # every distinct write lost its answer
    assert sorted(lost.values()) == sorted(clean.values()) and sum(clean.values()) > 20


def test_one_write_that_sends_several_requests_keys_each_apart(
    served: str, monkeypatch: pytest.MonkeyPatch
):
    """`write_history` over the protocol is one `post_turn` per turn, all inside one named
    write: each request gets its own key, so none is answered with another's reply."""
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", TOKEN)
    turns = [Turn(role="user", text=f"Turn {n} of the call.", at=AT) for n in range(3)]
    watch = Stopwatch(writer="bulk-tenant")

    async def write() -> list[str]:
        engine = create("http?" + urlencode({"url": served, "timeout": 2, "backoff": 0.01}))
        try:
            return await watch.time(
                "write_history", engine.write_history("bulk-tenant", "ops", "t1", turns)
            )
        finally:
            await engine.close()

    ids = asyncio.run(write())
    assert len(set(ids)) == 3
    assert held(served, ["bulk-tenant"]) == {"bulk-tenant": 3}
