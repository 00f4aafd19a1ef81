"""The whole built-in suite through one engine, as a test of an adapter against its fake."""

from __future__ import annotations

import asyncio

from memeval.engines.base import Engine
from memeval.results import CaseResult, CaseStatus
from memeval.runner import run_case
from memeval.suites.catalog import resolve
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario

CONCURRENCY = 8


def run_builtin_suite(engine: Engine, run_id: str) -> list[CaseResult]:
    """Every built-in scenario and fixture, several at once as a worker would run them."""
    cases: list[Scenario | Fixture] = [c.case for c in resolve("all").cases]

    async def go() -> list[CaseResult]:
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(case: Scenario | Fixture) -> CaseResult:
            async with gate:
                return await run_case(case, engine, run_id=run_id)

        try:
            return list(await asyncio.gather(*(one(c) for c in cases)))
        finally:
            await engine.close()

    return asyncio.run(go())


def every_case_done(results: list[CaseResult]) -> list[CaseResult]:
    """Assert the whole suite ran to the end with no error, every scenario settled and probed;
    returns the scenarios' results."""
    builtin = resolve("all").cases
    assert len(results) == len(builtin) > 60
    failed = {r.case_id: r.error for r in results if r.status is not CaseStatus.done or r.error}
    assert failed == {}
    scenarios = [r for r in results if r.kind == "scenario"]
    assert len(scenarios) == sum(isinstance(c.case, Scenario) for c in builtin)
    assert all(r.probes for r in scenarios)  # settled, then probed
    return scenarios
