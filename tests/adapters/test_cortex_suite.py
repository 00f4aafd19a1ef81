"""The whole built-in suite through `cortex` and through `tinyhumans`, each against its
SDK-validated fake, several cases at once: every case completes, every lifecycle scenario
settles, and the cost the run reports is what the fake billed."""

from __future__ import annotations

import pytest

from memeval.results import CaseResult, CaseStatus
from memeval.scoring.spend import engine_spend
from memeval.suites.catalog import resolve
from memeval.suites.scenario import Scenario
from tests.adapters.builtin_suite import run_builtin_suite
from tests.adapters.conftest import engine_at
from tests.adapters.fake_cortex import PRICE_USD
from tests.adapters.fake_tinyhumans import JWT, FakeTinyHumans
from tests.adapters.fakes import running


def assert_completed(results: list[CaseResult]) -> None:
    assert len(results) == len(resolve("all").cases) > 60
    failed = {r.case_id: r.error for r in results if r.status is not CaseStatus.done or r.error}
    assert failed == {}
    scenarios = [r for r in results if r.kind == "scenario"]
    assert len(scenarios) == sum(isinstance(c.case, Scenario) for c in resolve("all").cases)
    assert all(r.probes for r in scenarios)  # settled, then probed


def test_the_suite_runs_through_cortex(cortex_url, cortex):
    engine = engine_at("cortex", cortex_url, "enrich_wait=1&enrich_poll=0.01")
    results = run_builtin_suite(engine, "suite")
    assert_completed(results)
    spent = engine_spend(results)
    assert spent is not None and cortex.log.billed_events > 0
    assert spent.usd_micros == round(cortex.log.billed_events * PRICE_USD * 1e6)
    assert spent.calls == cortex.log.billed_events
    assert cortex.log.builds and cortex.log.events == []


def test_the_suite_runs_through_tinyhumans(monkeypatch: pytest.MonkeyPatch):
    fake = FakeTinyHumans()
    monkeypatch.setenv("TINYHUMANS_API_KEY", JWT)
    with running(fake.app()) as url:
        results = run_builtin_suite(engine_at("tinyhumans", url, "enrich_wait=0.05"), "suite")
    assert_completed(results)
    assert engine_spend(results) is None  # hosted memory reports no usage: a dash, not $0
    assert fake.log.billed_events > 0 and fake.log.events == []
