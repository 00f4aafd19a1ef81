"""`tinyhumans` against the SDK-validated fake hosted backend (`fake_tinyhumans`): envelopes,
one claimed write per request, scopes the backend takes, 409 as already stored, 402 as the
end of the run, and the fixed enrichment wait."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from memeval.engines.adapters.tinyhumans import TinyHumansEngine
from memeval.engines.adapters.transport import RemoteError
from memeval.engines.idempotency import write_key
from memeval.engines.registry import create
from memeval.engines.types import Capability, MemoryItem
from memeval.errors import AuthRejected, CreditsExhausted, Unsupported, UsageError
from memeval.results import CaseStatus
from memeval.runner import run_case
from memeval.suites.catalog import resolve
from memeval.suites.fixture import Assertion
from tests.adapters.conftest import engine_at, run
from tests.adapters.fake_tinyhumans import JWT, FakeTinyHumans
from tests.adapters.fakes import Fault, running
from tests.adapters.history import run_conversation


@pytest.fixture
def hosted(monkeypatch) -> Iterator[tuple[FakeTinyHumans, str]]:
    fake = FakeTinyHumans()
    monkeypatch.setenv("TINYHUMANS_API_KEY", JWT)
    with running(fake.app()) as url:
        yield fake, url


def hosted_engine(url: str, extra: str = "enrich_wait=0.3") -> TinyHumansEngine:
    engine = engine_at("tinyhumans", url, extra)
    assert isinstance(engine, TinyHumansEngine)
    return engine


def scenario(name: str):
    return next(c.case for c in resolve("lifecycle").cases if c.case.id.endswith(name))


def test_a_scenario_runs_on_the_memory_routes_one_claimed_write_at_a_time(hosted):
    fake, url = hosted
    engine = hosted_engine(url)
    assert not {Capability.inspect, Capability.usage, Capability.conflicts} & engine.capabilities

    async def go():
        result = await run_case(scenario("learnings"), engine, run_id="r")
        with pytest.raises(Unsupported):
            await engine.usage()
        await engine.close()
        return result

    result = run(go())
    assert result.status is CaseStatus.done, result.error
    assert all(p.captured is None for p in result.probes)  # not measured, never 0
    assert all(s.path.startswith("/memory/") for s in fake.wire.seen)
    writes = fake.wire.calls("/memory/experience", "POST")
    claims = [s.headers.get("idempotency-key") for s in writes]
    assert writes and all(claims) and len(set(claims)) == len(claims)
    assert all("items" not in json.loads(s.body) for s in writes)  # one event per request
    assert not fake.wire.calls("beliefs") and not fake.wire.calls("admin")
    assert fake.log.events == []  # forgotten by id


def test_a_claim_already_taken_means_the_write_is_stored(hosted):
    fake, url = hosted
    fake.log.lag = 0
    engine = hosted_engine(url, "enrich_wait=0&timeout=0.3")

    async def write() -> tuple[str, list[str]]:
        fake.wire.inject(Fault(0, delay=0.6, path="/memory/experience"))  # applied, reply lost
        with write_key("run/case/0/w0"):
            written = await engine.ingest("t", MemoryItem(id="d", text="Grace owns the rota."))
        listed = await engine.list("t")
        await engine.close()
        return written, listed

    written, listed = run(write())
    sent = fake.wire.calls("/memory/experience", "POST")
    assert len(sent) == 2 and len({s.headers["idempotency-key"] for s in sent}) == 1
    assert len(fake.log.events) == 1 and listed == [written]


def test_fixture_writes_go_one_by_one_and_are_polled_until_listed(hosted):
    fake, url = hosted
    fake.log.lag = 2
    engine = hosted_engine(url)

    async def go():
        for n, text in enumerate(("Acme is on the Free plan.", "Acme moved to Enterprise.")):
            await engine.store("t", Assertion(id=f"a{n}", text=text, source="crm"))
        found = await engine.query("t", "Which plan is Acme on?")
        await engine.close()
        return found

    found = run(go())
    assert len(fake.wire.calls("/memory/experience", "POST")) == 2
    assert not any("wait=" in s.query for s in fake.wire.seen)
    assert len(fake.wire.calls("/memory/events")) >= 3  # listed only on the third poll
    assert {h.source for h in found.hits} == {"crm"}


def test_synthesis_waits_a_fixed_time_after_the_last_write(hosted):
    _fake, url = hosted
    engine = hosted_engine(url, "enrich_wait=0.5")

    async def go() -> tuple[float, int]:
        await engine.ingest("t", MemoryItem(id="d", text="Grace owns the rota."))
        started = time.monotonic()
        report = await engine.build_beliefs("t")
        await engine.close()
        return time.monotonic() - started, report.built

    waited, built = run(go())
    assert 0.4 < waited < 3 and built == 0


def test_an_error_envelope_on_a_success_status_is_an_error(hosted):
    fake, url = hosted
    engine = hosted_engine(url)
    fake.wire.inject(Fault(200, body={"success": False, "error": "locked", "errorCode": "LOCKED"}))
    with pytest.raises(RemoteError, match=r"\[LOCKED\] locked"):
        run(engine.list("t"))


def test_an_empty_account_stops_the_run_and_a_refused_key_names_its_variable(hosted, monkeypatch):
    fake, url = hosted
    fake.credits = 0
    with pytest.raises(CreditsExhausted):
        run(hosted_engine(url).preflight())
    fake.credits = 10
    monkeypatch.setenv("TINYHUMANS_API_KEY", "tiny_live_wrong")
    with pytest.raises(AuthRejected) as caught:
        run(hosted_engine(url).preflight())
    assert (
        "TINYHUMANS_API_KEY" in caught.value.fix and "tiny_live_wrong" not in caught.value.render()
    )
    probe = fake.wire.seen[-1]
    assert probe.path == "/memory/scopes" and "prefix=app%3Amemeval" in probe.query


def test_only_a_jwt_or_a_live_key_and_only_scopes_the_backend_takes(monkeypatch):
    monkeypatch.setenv("TINYHUMANS_API_KEY", "tiny_live_abc")
    assert create("tinyhumans").name == "tinyhumans"
    with pytest.raises(UsageError) as caught:
        create("tinyhumans?scope_prefix=app:mem.eval")
    assert "TINYHUMANS_SCOPE_PREFIX" in caught.value.fix
    monkeypatch.setenv("TINYHUMANS_API_KEY", "sk-wrong-kind-of-key")
    with pytest.raises(UsageError) as caught:
        create("tinyhumans")
    assert "TINYHUMANS_API_KEY" in caught.value.fix and "sk-wrong" not in caught.value.render()


def test_a_backend_that_takes_only_the_sdks_recall_body_errors_the_case(monkeypatch, tmp_path):
    """A recall refused for its shape is an error of the case naming the route, status and
    code, never a 0.0% score (before, every probe was scored as a miss)."""
    fake = FakeTinyHumans(recall_shape="sdk")
    monkeypatch.setenv("TINYHUMANS_API_KEY", JWT)
    with running(fake.app()) as url:
        result = run_conversation(hosted_engine(url, "enrich_wait=0"), tmp_path)
    assert result.status is CaseStatus.error and result.score is None
    assert (result.error or "").startswith("refused: tinyhumans POST 400 VALIDATION_ERROR")
    assert "/memory/recall" in (result.error or "")
