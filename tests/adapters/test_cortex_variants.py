"""`cortex` against every variant of CortexDB's wire the vendor's sources allow (SOURCES.md):
an imported LoCoMo conversation stores every turn once and is scored on each, and what each
variant changes is checked where it shows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memeval.engines.adapters.cortex import CortexEngine
from memeval.engines.adapters.wire_facts import render, sourced
from memeval.engines.types import QueryResult
from memeval.errors import AuthRejected, Unsupported
from memeval.suites.fixture import Assertion
from tests.adapters.conftest import engine_at, run
from tests.adapters.fake_cortex import KEY, FakeCortex
from tests.adapters.fakes import running
from tests.adapters.history import run_conversation
from tests.adapters.test_history_writes import assert_once, assert_scored, log_texts
from tests.conftest import run_cli

QUICK = "enrich_wait=1&enrich_poll=0.01"
VARIANTS: dict[str, dict[str, Any]] = {
    "measured-doubles": {},
    "api-reference-events": {"event_shape": "top_level"},
    "minted-token": {"token": "minted"},
    "no-whoami": {"whoami_route": False},
    "usage-403": {"usage_closed": 403},
    "usage-404": {"usage_closed": 404},
    "diagnostics-enforced": {"diagnostics_enforced": True},
    "wait-timeout-408": {"wait_timeout": True},
    "tier-402-on-build": {"build_refused": "FEATURE_NOT_IN_TIER"},
}


@pytest.fixture(params=list(VARIANTS))
def variant(request: pytest.FixtureRequest, monkeypatch) -> Iterator[tuple[str, FakeCortex, str]]:
    fake = FakeCortex(**VARIANTS[request.param])
    monkeypatch.setenv("CORTEX_API_KEY", KEY)
    if fake.token == "minted":
        monkeypatch.setenv("CORTEX_ACTOR", fake.caller)  # a minted token's `sub`
    with running(fake.app()) as url:
        yield request.param, fake, url


def test_a_conversation_is_stored_once_and_scored_on_every_variant(variant, tmp_path: Path):
    _, fake, url = variant
    result = run_conversation(engine_at("cortex", url, QUICK), tmp_path)
    assert_scored(result)
    assert_once(log_texts(fake.log))
    if fake.usage_closed:
        assert result.engine_usage is None  # a dash in the report, not $0, not an error
    if fake.whoami_route:
        actors = {s.headers.get("x-cortex-actor") for s in fake.wire.seen}
        assert actors <= {fake.caller, "user:default"} and None not in actors
    recalls = [json.loads(s.body) for s in fake.wire.calls("/v1/recall")]
    assert recalls and all(r["diagnostics"] == "none" for r in recalls)


def test_a_minted_token_without_its_actor_names_the_setting(monkeypatch):
    fake = FakeCortex(token="minted", caller="user:alice")
    monkeypatch.setenv("CORTEX_API_KEY", KEY)
    with running(fake.app()) as url:
        engine = engine_at("cortex", url)
        with pytest.raises(AuthRejected) as caught:
            run(engine.preflight())
    assert "CORTEX_ACTOR" in caught.value.fix and "user:default" in caught.value.message
    (whoami,) = fake.wire.calls("/v1/auth/whoami")
    assert whoami.headers["x-cortex-actor"] == "user:default"  # the SDK's default, sent


@pytest.mark.parametrize("closed", [403, 404])
def test_a_closed_usage_route_is_usage_unknown_not_a_rejected_key(monkeypatch, caplog, closed):
    fake = FakeCortex(usage_closed=closed)
    monkeypatch.setenv("CORTEX_API_KEY", KEY)
    with running(fake.app()) as url:
        engine = engine_at("cortex", url)
        assert isinstance(engine, CortexEngine)

        async def calls() -> None:
            await engine.preflight()  # goes through
            for _ in range(3):
                with pytest.raises(Unsupported):
                    await engine.usage()
            await engine.close()

        run(calls())
    said = [r.getMessage() for r in caplog.records if "usage" in r.getMessage()]
    assert len(said) == 1 and "unknown" in said[0] and "key itself was accepted" in said[0]
    assert len(fake.wire.calls("/v1/admin/usage")) == 1  # asked once, then known closed


def test_a_tier_402_on_the_build_is_named_and_halts_nothing(monkeypatch, caplog):
    fake = FakeCortex(build_refused="FEATURE_NOT_IN_TIER")
    monkeypatch.setenv("CORTEX_API_KEY", KEY)
    with running(fake.app()) as url:
        engine = engine_at("cortex", url, "enrich_wait=0")
        with pytest.raises(Unsupported):
            run(engine.build_beliefs("t1"))
    (said,) = [r.getMessage() for r in caplog.records if "402" in r.getMessage()]
    assert "FEATURE_NOT_IN_TIER" in said and "out of credit" in said and "tier" in said


def test_a_wait_timeout_settles_on_the_listing(monkeypatch, tmp_path: Path):
    fake = FakeCortex(wait_timeout=True)
    fake.log.lag = 3
    monkeypatch.setenv("CORTEX_API_KEY", KEY)
    with running(fake.app()) as url:
        engine = engine_at("cortex", url)

        async def calls() -> QueryResult:
            await engine.store("t1", Assertion(id="a1", text="The kayak is red.", source="s"))
            found = await engine.query("t1", "kayak colour red")
            await engine.close()
            return found

        found = run(calls())
    assert [h.text for h in found.hits] == ["The kayak is red."]
    assert len(fake.wire.calls("/v1/experience/bulk")) == 1  # not retried: durable already


def test_sources_md_is_the_table_and_names_every_variant():
    listed = (Path(__file__).parent / "SOURCES.md").read_text()
    assert listed == render()  # regenerate: python -m memeval.engines.adapters.wire_facts
    assert all(f"`{name}`" in listed for name in VARIANTS if name != "measured-doubles")


def test_memeval_engines_shows_how_many_wire_facts_are_sourced():
    done = run_cli("engines", env={"COLUMNS": "250"})
    have, total = sourced("cortex") or (0, 0)
    assert done.returncode == 0 and f"wire facts sourced: {have} of {total}" in done.stdout
    assert 0 < have < total  # the guesses are counted, not hidden
