"""The whole built-in suite through `cortex` and through `tinyhumans`, each against its
SDK-validated fake, several cases at once: every case completes, every lifecycle scenario
settles, and the cost the run reports is what the fake billed."""

from __future__ import annotations

import pytest

from memeval.scoring.spend import engine_spend
from tests.adapters.builtin_suite import every_case_done, run_builtin_suite
from tests.adapters.conftest import engine_at
from tests.adapters.fake_cortex import PRICE_USD
from tests.adapters.fake_tinyhumans import JWT, FakeTinyHumans
from tests.adapters.fakes import running


def test_the_suite_runs_through_cortex(cortex_url, cortex):
    engine = engine_at("cortex", cortex_url, "enrich_wait=1&enrich_poll=0.01")
    results = run_builtin_suite(engine, "suite")
    every_case_done(results)
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
    every_case_done(results)
    assert engine_spend(results) is None  # hosted memory reports no usage: a dash, not $0
    assert fake.log.billed_events > 0 and fake.log.events == []
