"""The whole built-in suite through one engine, as a test of an adapter against its fake."""

from __future__ import annotations

import asyncio

from memeval.engines.base import Engine
from memeval.results import CaseResult
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
