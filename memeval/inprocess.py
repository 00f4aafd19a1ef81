"""Runs a plan inside this process with asyncio: the debugging path, and the farm's fallback.

It calls the same `run_case` as the Celery task, so its scores are the farm's scores.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from memeval.engines.registry import create
from memeval.plan import RunPlan
from memeval.results import CaseResult
from memeval.runner import run_case
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario


async def run_plan(
    plan: RunPlan,
    cases: dict[str, Scenario | Fixture],
    *,
    concurrency: int = 8,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    engine = create(plan.engine)
    gate = asyncio.Semaphore(concurrency)
    results: list[CaseResult] = []

    async def one(case_id: str, trial: int) -> None:
        async with gate:
            result = await run_case(
                cases[case_id], engine, run_id=plan.run_id, trial=trial, options=plan.options
            )
        results.append(result)
        if on_result is not None:
            on_result(result)

    try:
        await asyncio.gather(*(one(ref.case_id, ref.trial) for ref in plan.cases))
    finally:
        await engine.close()
    return results
