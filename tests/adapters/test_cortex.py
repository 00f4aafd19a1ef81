"""`cortex` and `tinyhumans` against a fake CortexDB on 127.0.0.1 speaking the v1 wire (and
the hosted `/memory/*` form): headers, settling, enrichment, inspection, usage, faults."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from memeval.engines.adapters.cortex import CortexEngine
from memeval.engines.adapters.transport import AuthRejected, RemoteError
from memeval.engines.base import Unsupported
from memeval.engines.registry import create
from memeval.engines.types import Capability, MemoryItem
from memeval.errors import UsageError
from memeval.results import CaseStatus, Phase
from memeval.runner import run_case
from memeval.suites.catalog import resolve
from memeval.suites.fixture import Assertion
from tests.adapters.conftest import engine_at, run
from tests.adapters.fake_cortex import ACTOR, FakeCortex
from tests.adapters.fakes import Fault, running

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0ZXN0In0.c2lnbmF0dXJl"


def scenario(name: str):
    return next(c.case for c in resolve("lifecycle").cases if c.case.id.endswith(name))


def cortex_engine(url: str, extra: str = "enrich_wait=2") -> CortexEngine:
    engine = engine_at("cortex", url, extra)
    assert isinstance(engine, CortexEngine)
    return engine


def test_connect_learns_the_actor_and_every_write_is_keyed(cortex_url, cortex):
    engine = cortex_engine(cortex_url)

    async def calls() -> None:
        await engine.ingest("t", MemoryItem(id="d", text="Grace owns the rota."))
        await engine.close()

    run(calls())
    assert engine.version == "0.10.4-fake"
    whoami, *rest = cortex.wire.seen
    assert whoami.path == "/v1/auth/whoami"
    assert all(s.headers.get("x-cortex-actor") == ACTOR for s in rest)
    posts = [s for s in rest if s.method == "POST"]
    assert posts and all(len(s.headers["idempotency-key"]) == 32 for s in posts)
    assert all(s.headers["authorization"].startswith("Bearer ") for s in cortex.wire.seen)


def test_fixture_writes_flush_in_one_waited_bulk_before_a_read(cortex_url, cortex):
    engine = cortex_engine(cortex_url)
    first = Assertion(id="plan-1", text="Acme is on the Free plan.", source="crm")
    second = Assertion(
        id="plan-2", text="Acme is on the Enterprise plan.", source="billing", supersedes="plan-1"
    )

    async def calls() -> None:
        await engine.store("t", first)
        await engine.store("t", second)
        assert not cortex.wire.calls("/experience")  # nothing sent yet
        found = await engine.query("t", "Which plan is Acme on?")
        conflicts = await engine.conflicts("t", "plan-1")
        await engine.reset("t")
        await engine.close()
        return found, conflicts

    found, conflicts = run(calls())
    (bulk,) = cortex.wire.calls("/v1/experience/bulk")
    assert bulk.query == "wait=indexed"
    assert {h.assertion_id for h in found.hits} == {"plan-1", "plan-2"}
    assert {h.source for h in found.hits} == {"crm", "billing"}
    assert conflicts[0].ids == ["plan-1", "plan-2"] and conflicts[0].resolved_to == "plan-2"
    assert cortex.scopes == {}  # reset forgot the scope


def test_a_scenario_settles_through_event_paging_and_is_inspected(cortex_url, cortex):
    engine = cortex_engine(cortex_url)

    async def go():
        result = await run_case(scenario("learnings"), engine, run_id="r")
        await engine.close()
        return result

    result = run(go())
    assert result.status is CaseStatus.done, result.error
    assert len(cortex.wire.calls("/v1/events")) > 2  # several pages, several polls
    synthesis = [p for p in result.probes if p.phase is Phase.synthesis and p.scored]
    assert synthesis and all(p.captured is not None for p in synthesis)
    assert cortex.builds and any(b["jobs"] for b in cortex.builds)  # learnings' jobs replayed
    window = result.engine_usage  # running totals around the case, as admin/usage reports them
    assert window is not None and window.before.calls >= 100  # the fake's account had history
    assert 0 < window.after.calls - window.before.calls < 100
    assert result.engine_usd_micros == window.after.usd_micros - window.before.usd_micros > 0
    assert cortex.scopes == {}  # the case forgot what it wrote


def test_beliefs_wait_for_the_enrichment_backlog_to_drain(cortex_url, cortex):
    cortex.backlog = 4
    engine = cortex_engine(cortex_url)

    async def build() -> None:
        await engine.ready()
        await engine.build_beliefs("t")
        await engine.close()

    run(build())
    # one read to connect, then backlog 3, 2, 1, 0, 0: drained and steady
    assert cortex.usage_reads == 6


def test_the_enrichment_wait_is_capped(cortex_url, cortex):
    cortex.backlog = 10_000
    engine = cortex_engine(cortex_url, "enrich_wait=0.4")

    async def build() -> float:
        started = time.monotonic()
        await engine.build_beliefs("t")
        await engine.close()
        return time.monotonic() - started

    assert 0.35 < run(build()) < 3


def test_a_write_retried_after_a_timeout_is_stored_once(cortex_url, cortex):
    engine = cortex_engine(cortex_url, "enrich_wait=0&timeout=0.3")

    async def write() -> None:
        await engine.ready()
        cortex.wire.inject(Fault(0, delay=0.6, path="/v1/experience"))
        await engine.ingest("t", MemoryItem(id="d", text="Grace owns the rota."))
        await engine.close()

    run(write())
    sent = cortex.wire.calls("/v1/experience", "POST")
    assert (
        len(sent) == 2 and sent[0].headers["idempotency-key"] == sent[1].headers["idempotency-key"]
    )
    assert len(cortex.scopes["memeval/t"]) == 1


def test_a_wrong_key_names_its_variable(cortex, monkeypatch):
    monkeypatch.setenv("CORTEX_API_KEY", "not-the-key")
    with running(cortex.app()) as url:
        engine = cortex_engine(url)
        with pytest.raises(AuthRejected) as caught:
            run(engine.list("t"))
    assert "CORTEX_API_KEY" in caught.value.fix and "not-the-key" not in caught.value.render()


# ---- tinyhumans ---------------------------------------------------------------------------


@pytest.fixture
def hosted(monkeypatch) -> Iterator[tuple[FakeCortex, str]]:
    fake = FakeCortex(hosted=True, key=JWT)
    monkeypatch.setenv("TINYHUMANS_API_KEY", JWT)
    with running(fake.app()) as url:
        yield fake, url


def test_tinyhumans_runs_a_scenario_with_envelopes_and_no_admin_routes(hosted):
    fake, url = hosted
    engine = engine_at("tinyhumans", url, "enrich_wait=0.3")
    assert not {Capability.inspect, Capability.usage} & engine.capabilities

    async def go():
        result = await run_case(scenario("learnings"), engine, run_id="r")
        with pytest.raises(Unsupported):
            await engine.usage()
        await engine.close()
        return result

    result = run(go())
    assert result.status is CaseStatus.done, result.error
    assert all(p.captured is None for p in result.probes)  # shown as not measured, not as 0
    paths = {s.path for s in fake.wire.seen}
    assert all(path.startswith("/memory/") for path in paths)
    assert all(s.headers.get("idempotency-key") for s in fake.wire.seen if s.method == "POST")


def test_tinyhumans_waits_a_fixed_time_after_the_last_write(hosted):
    _fake, url = hosted
    engine = engine_at("tinyhumans", url, "enrich_wait=0.5")

    async def go() -> float:
        await engine.ingest("t", MemoryItem(id="d", text="Grace owns the rota."))
        started = time.monotonic()
        await engine.build_beliefs("t")
        await engine.close()
        return time.monotonic() - started

    assert 0.4 < run(go()) < 3


def test_tinyhumans_reads_an_error_envelope(hosted):
    fake, url = hosted
    engine = engine_at("tinyhumans", url)
    fake.wire.inject(Fault(200, body={"success": False, "error": "namespace locked"}))
    with pytest.raises(RemoteError, match="namespace locked"):
        run(engine.list("t"))


def test_tinyhumans_takes_a_jwt_or_a_live_key_only(monkeypatch):
    monkeypatch.setenv("TINYHUMANS_API_KEY", "tiny_live_abc")
    assert create("tinyhumans").name == "tinyhumans"
    monkeypatch.setenv("TINYHUMANS_API_KEY", "sk-wrong-kind-of-key")
    with pytest.raises(UsageError) as caught:
        create("tinyhumans")
    assert "TINYHUMANS_API_KEY" in caught.value.fix
    assert "sk-wrong" not in caught.value.render()
