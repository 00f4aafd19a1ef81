"""`verifiedstate` against a fake of its wire on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memeval.engines.registry import create
from memeval.errors import UsageError
from memeval.results import CaseStatus
from memeval.runner import run_case
from memeval.suites.catalog import resolve
from memeval.suites.fixture import Assertion
from tests.adapters.conftest import engine_at, run
from tests.adapters.fake_services import NAMESPACE, VS_KEY, FakeVerifiedState
from tests.adapters.fakes import running

FIRST = Assertion(id="plan-1", text="Acme is on the Free plan.", source="crm")
SECOND = Assertion(
    id="plan-2",
    text="Acme is on the Enterprise plan.",
    source="billing",
    supersedes="plan-1",
    excerpt="Upgrade: Acme is on the Enterprise plan.",
)


@pytest.fixture
def vs(monkeypatch) -> Iterator[tuple[FakeVerifiedState, str]]:
    fake = FakeVerifiedState()
    monkeypatch.setenv("VERIFIEDSTATE_API_KEY", VS_KEY)
    monkeypatch.setenv("VERIFIEDSTATE_NAMESPACE_ID", NAMESPACE)
    with running(fake.app()) as url:
        yield fake, url


def test_verifiedstate_maps_assertions_receipts_and_conflicts(vs):
    fake, url = vs
    engine = engine_at("verifiedstate", url)

    async def calls():
        await engine.store("t", FIRST)
        await engine.store("t", SECOND)
        found = await engine.query_at("t", "Which plan is Acme on?", datetime.now(UTC))
        conflicts = await engine.conflicts("t", "plan-1")
        await engine.close()
        return found, conflicts

    found, conflicts = run(calls())
    assert [c.path for c in fake.wire.seen[:3]] == ["/ingest", "/extract", "/verify"]
    assert all(s.headers["authorization"] == f"Bearer {VS_KEY}" for s in fake.wire.seen)
    hint = next(h for h in fake.assertions.values() if h["metadata"]["memeval_id"] == "plan-2")
    assert hint["supersedes"] in fake.assertions  # our ids became theirs
    assert {h.assertion_id for h in found.hits} == {"plan-1", "plan-2"}
    assert all(h.span is not None and h.source in ("crm", "billing") for h in found.hits)
    assert b'"as_of"' in fake.wire.calls("/query")[0].body
    assert conflicts[0].ids == ["plan-1", "plan-2"] and conflicts[0].resolved_to == "plan-2"


def test_verifiedstate_never_lets_another_tenant_into_the_hits(vs):
    fake, url = vs
    fake.ignore_filter = True  # a service that drops the tenant filter
    engine = engine_at("verifiedstate", url)

    async def calls():
        await engine.store("a", FIRST)
        found = await engine.query("b", "Which plan is Acme on?")
        await engine.close()
        return found

    assert run(calls()).hits == []


def test_verifiedstate_needs_its_namespace(monkeypatch):
    monkeypatch.setenv("VERIFIEDSTATE_API_KEY", VS_KEY)
    monkeypatch.delenv("VERIFIEDSTATE_NAMESPACE_ID", raising=False)
    with pytest.raises(UsageError) as caught:
        create("verifiedstate")
    assert "VERIFIEDSTATE_NAMESPACE_ID" in caught.value.fix


def test_verifiedstate_runs_a_dimension_fixture(vs):
    _fake, url = vs
    engine = engine_at("verifiedstate", url)
    fixture = resolve("dimensions").fixtures[0]

    async def go():
        result = await run_case(fixture, engine, run_id="r")
        await engine.close()
        return result

    result = run(go())
    assert result.status is CaseStatus.done and result.checks
