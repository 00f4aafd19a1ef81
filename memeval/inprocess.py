"""Runs a plan inside this process with asyncio: the debugging path, and the farm's fallback.

It calls the same `run_case` as the Celery task, so its scores are the farm's scores. What
the farm would share between workers (rate limits, a budget) comes in as an `OpenShared`
(`memeval.llm.shared`): memory (`memeval.llm.in_memory`), or the farm's Redis when the caller
is the shell; progress goes out through a `ResultHook`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Protocol

from memeval.bounded import Bounded
from memeval.engines.base import Engine
from memeval.engines.registry import create
from memeval.evaluation.planning import RunPlan
from memeval.llm.answer import PaidCalls, answerer_for
from memeval.llm.shared import OpenShared
from memeval.results import CaseResult
from memeval.runner import failed_result, run_case
from memeval.runner.failures import Action, judge
from memeval.runner.refusals import FirstCases
from memeval.runner.throttle import engine_within
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario

log = logging.getLogger(__name__)


class ResultHook(Protocol):
    """Told of each case result as it lands: the store's writer, a progress line."""

    def __call__(self, result: CaseResult) -> None: ...


async def run_plan(
    plan: RunPlan,
    cases: Iterable[tuple[Scenario | Fixture, int]],
    *,
    concurrency: int = 8,
    on_result: ResultHook | None = None,
    shared: OpenShared | None = None,
    ledger: PaidCalls | None = None,
    instance: Engine | None = None,
) -> list[CaseResult]:
    """`cases`: each case with its trial, read only when a slot is free, so no more than
    `concurrency` case bodies are held at once whatever the suite's size. `shared` is needed
    only when the plan sets rates or a budgeted model; `ledger` records its paid calls, as a
    farm worker does in the store. `instance`, when given, runs instead of one built from
    `plan.engine` (an object `memeval.evaluate` was handed, which no reference can rebuild);
    it is closed at the end like a built one."""
    results: list[CaseResult] = []
    first = FirstCases(plan.options.refused_stop)
    raw = instance if instance is not None else create(plan.engine)
    try:
        async with (
            engine_within(raw, plan.options.rates, shared) as engine,
            answerer_for(plan.options.llm, shared=shared, ledger=ledger) as answerer,
        ):

            async def one(case: Scenario | Fixture, trial: int) -> None:
                started = datetime.now(UTC)
                try:
                    result = await run_case(
                        case,
                        engine,
                        run_id=plan.run_id,
                        trial=trial,
                        options=plan.options,
                        answerer=answerer,
                    )
                except Exception as exc:
                    verdict = judge(exc)  # the engine down or out of credit stops the run
                    if verdict.action is Action.stop:
                        raise
                    log.debug("case %s#%d raised", case.id, trial, exc_info=True)
                    result = failed_result(
                        case,
                        run_id=plan.run_id,
                        trial=trial,
                        engine=plan.engine,
                        reason=verdict.reason,
                        started_at=started,
                        status=verdict.status,
                    )
                results.append(result)
                if on_result is not None:
                    on_result(result)
                stop = first.land(result)
                if stop is not None:
                    raise stop  # the engine refuses every case alike: a setting to fix

            slots = Bounded(concurrency)
            for case, trial in cases:
                await slots.start(one(case, trial))
            await slots.finish()
    finally:
        await raw.close()
    return results
