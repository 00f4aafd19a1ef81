"""No tenant sees another's data, through the engine API and through `memeval conformance`
against the engine served over memeval's protocol; reset touches one tenant only."""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime

import pytest
from pydantic import SecretStr

from memeval.conformance import Verdict, check
from memeval.engines.types import Assertion, MemoryItem, Turn, TurnContext
from memeval.server.app import create_app
from tests.adapters.fakes import running
from tests.oss.engines import ENGINES, NEXT, engine_at

AT = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def _marker() -> str:
    return f"zq{secrets.token_hex(4)}"


@pytest.mark.parametrize("name", [*ENGINES, *NEXT, "mem0-oss?vector_store=faiss"])
def test_tenants_never_see_each_other(name, model_url, tmp_path):
    engine = engine_at(name, model_url, str(tmp_path))
    mark_a, mark_b = _marker(), _marker()
    a, b = f"iso-a-{secrets.token_hex(3)}", f"iso-b-{secrets.token_hex(3)}"

    async def go() -> None:
        try:
            for tenant, mark in ((a, mark_a), (b, mark_b)):
                text = f"The vault code of the north office is {mark}."
                await engine.store(tenant, Assertion(id="vault", text=text, source="memo"))
                item = MemoryItem(id="doc", text=f"Deploy notes: the {mark} cluster.", at=AT)
                await engine.ingest(tenant, item)
                turn = Turn(role="user", text=f"My badge number is {mark}.", at=AT)
                await engine.post_turn(tenant, "agent", "t1", turn)
            for tenant, mine, theirs in ((a, mark_a, mark_b), (b, mark_b, mark_a)):
                found = await engine.query(tenant, "What is the vault code of the north office?")
                assert any(mine in h.text for h in found.hits)
                assert not any(theirs in h.text for h in found.hits)
                probe = Turn(role="user", text=f"What about the {theirs} cluster and badge?", at=AT)
                ctx = TurnContext(agent="agent", thread="t2", turn=probe, log=False)
                pack = await engine.pre_turn(tenant, ctx)
                assert theirs not in pack.markdown
            ids_a, ids_b = set(await engine.list(a)), set(await engine.list(b))
            assert len(ids_a) >= 3 and len(ids_b) >= 3 and not ids_a & ids_b
            await engine.reset(a)
            assert await engine.list(a) == []
            assert set(await engine.list(b)) == ids_b
            found = await engine.query(b, "vault code north office")
            assert any(mark_b in h.text for h in found.hits)
            await engine.forget(b)
            assert await engine.list(b) == []
        finally:
            await engine.close()

    asyncio.run(go())


@pytest.mark.parametrize("name", [*ENGINES, *NEXT])
def test_memeval_conformance_passes_the_served_engine(name, model_url, tmp_path):
    token = secrets.token_hex(8)
    engine = engine_at(name, model_url, str(tmp_path))
    with running(create_app(engine, SecretStr(token))) as url:
        # 240 s: Letta's server starts on the engine's first call, tens of seconds here.
        checks = asyncio.run(check(url, SecretStr(token), timeout=240))
    verdicts = {c.name: c.verdict for c in checks}
    assert Verdict.failed not in verdicts.values(), [c for c in checks if c.verdict != "pass"]
    for name_ in ("fixture tenants kept apart", "lifecycle tenants kept apart"):
        assert verdicts[name_] is Verdict.passed


def test_graphiti_still_finds_a_tenants_writes_after_another_was_forgotten(model_url, tmp_path):
    """Kuzu's text indexes kept a forgotten tenant's entries, which hid the next tenant's; and
    rebuilding them in the database that had just deleted the rows crashed the process (a
    segfault in Kuzu) by the second or third tenant forgotten in turn."""
    engine = engine_at("graphiti", model_url, str(tmp_path))
    doc = MemoryItem(
        id="refund", title="Refund policy", text="Refunds reach the card in five days."
    )

    async def go() -> None:
        try:
            for tenant in ("first", "second", "third", "fourth", "fifth"):
                await engine.ingest(tenant, doc)
                found = await engine.query(tenant, "How many days does a refund take?")
                assert any("five days" in h.text for h in found.hits), tenant
                await engine.forget(tenant)
        finally:
            await engine.close()

    asyncio.run(go())
