"""Runs a plan inside this process with asyncio: the debugging path, and the farm's fallback.

It calls the same `run_case` as the Celery task, so its scores are the farm's scores.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from memeval.engines.registry import create
from memeval.llm.answer import PaidCalls, answerer_for
from memeval.plan import RunPlan
from memeval.results import CaseResult
from memeval.runner import run_case
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario
from workers.limiter import limited_engine


async def run_plan(
    plan: RunPlan,
    cases: dict[str, Scenario | Fixture],
    *,
    concurrency: int = 8,
    on_result: Callable[[CaseResult], None] | None = None,
    redis_url: str | None = None,
    ledger: PaidCalls | None = None,
) -> list[CaseResult]:
    """`redis_url` is needed only when the plan sets rates or a budgeted model; `ledger`
    records its paid calls, as a farm worker does in the store."""
    gate = asyncio.Semaphore(concurrency)
    results: list[CaseResult] = []
    raw = create(plan.engine)
    try:
        async with (
            limited_engine(raw, plan.options.rates, redis_url or "") as engine,
            answerer_for(plan.options.llm, redis_url=redis_url, ledger=ledger) as answerer,
        ):

            async def one(case_id: str, trial: int) -> None:
                async with gate:
                    result = await run_case(
                        cases[case_id],
                        engine,
                        run_id=plan.run_id,
                        trial=trial,
                        options=plan.options,
                        answerer=answerer,
                    )
                results.append(result)
                if on_result is not None:
                    on_result(result)

            await asyncio.gather(*(one(ref.case_id, ref.trial) for ref in plan.cases))
    finally:
        await raw.close()
    return results
