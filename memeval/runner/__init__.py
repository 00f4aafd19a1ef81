"""Executes one case against one engine on one tenant. Plain Python: no Celery in here.

The farm's task is a thin shell around `run_case`, and tests call it directly.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from memeval import clock
from memeval.engines.attempts import counting
from memeval.engines.base import Engine
from memeval.engines.types import Capability, Usage
from memeval.errors import EngineRefused, EngineUnavailable, Unsupported
from memeval.llm.estimate import planned_answers
from memeval.results import CaseResult, CaseStatus, UsageWindow
from memeval.runner.answers import finish_answers
from memeval.runner.context import CaseContext, RunOptions, tenant_base
from memeval.runner.fixture import run_fixture
from memeval.runner.refusals import describe
from memeval.runner.scenario import run_scenario
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario
from memeval.text import mended

if TYPE_CHECKING:
    from memeval.llm.answer import Answerer

__all__ = ["RunOptions", "failed_result", "run_case", "tenant_base"]


async def run_case(
    case: Scenario | Fixture,
    engine: Engine,
    *,
    run_id: str,
    trial: int = 0,
    attempt: int = 0,
    options: RunOptions | None = None,
    answerer: Answerer | None = None,
) -> CaseResult:
    """Run a case to a scored result. Memory failures are results; only `EngineUnavailable`
    (infrastructure) propagates, so the caller can retry the whole case; `attempt` counts
    those retries and names a fresh tenant for each.

    With an `answerer`, a model also answers every probe and query; the case's whole model
    spend is held first, and when the budget cannot hold it the case is recorded
    `skipped_budget` without touching the engine."""
    options = options or RunOptions()
    is_fixture = isinstance(case, Fixture)
    result = CaseResult(
        run_id=run_id,
        case_id=case.id,
        trial=trial,
        kind="fixture" if is_fixture else "scenario",
        dimension=case.dimension.value if isinstance(case, Fixture) else None,
        engine=engine.name,
        tenant=tenant_base(run_id, case.id, trial, attempt),
        attempt=attempt,
        status=CaseStatus.done,
        tags=[] if isinstance(case, Fixture) else [t.value for t in case.tags],
        started_at=datetime.now(UTC),
        capabilities=sorted(c.value for c in engine.capabilities),
    )
    if answerer is None:
        return await _run(case, engine, result, options, None)
    async with answerer.for_case(planned_answers(case, k=options.k)) as funded:
        if funded is None:
            result.status = CaseStatus.skipped_budget
            result.finished_at = datetime.now(UTC)
            return result
        return await _run(case, engine, result, options, funded)


async def _run(
    case: Scenario | Fixture,
    engine: Engine,
    result: CaseResult,
    options: RunOptions,
    answerer: Answerer | None,
) -> CaseResult:
    ctx = CaseContext(result, options, answerer)
    before = await _usage(engine, ctx)
    result.evaluated_at = case.evaluation_time
    try:
        with clock.pinned(case.evaluation_time):
            if isinstance(case, Fixture):
                await run_fixture(case, engine, ctx)
            else:
                await run_scenario(case, engine, ctx)
                result.score = _scenario_score(result)
    except EngineUnavailable:
        raise
    except EngineRefused as exc:  # an error of the case, never a score
        _refused(result, exc)
    except Unsupported as exc:
        result.status = CaseStatus.done
        result.score = 0.0
        result.error = mended(f"unsupported: {exc}")
    finally:
        if not options.keep:
            ctx.watch.step = "forget"
            await _forget(case, engine, ctx)
    after = await _usage(engine, ctx)
    if before is not None and after is not None:
        result.engine_usage = UsageWindow(before=before, after=after)
        result.engine_usd_micros = max(0, after.usd_micros - before.usd_micros)
    finish_answers(ctx)
    result.timings = ctx.watch.timings
    result.infra_retries = ctx.watch.retried.failed
    # Read again now the engine has been used: a remote engine learns what it can do from its
    # server on its first call, so at the case's start it may still claim nothing.
    result.capabilities = sorted(c.value for c in engine.capabilities)
    result.finished_at = datetime.now(UTC)
    return result


async def _usage(engine: Engine, ctx: CaseContext) -> Usage | None:
    """The engine's running totals, or None when it keeps none; read outside the timed steps,
    so the bookkeeping never shows up as the engine's latency (its retries still count)."""
    if Capability.usage not in engine.capabilities:
        return None
    try:
        with counting(ctx.watch.retried):
            return await engine.usage()
    except (Unsupported, EngineRefused):  # usage unknown: a dash in the report, not an error
        return None


def _refused(result: CaseResult, exc: EngineRefused) -> None:
    if result.status is not CaseStatus.error:  # the first refusal is the one that matters
        result.status, result.error, result.score = CaseStatus.error, describe(exc), None


def _scenario_score(result: CaseResult) -> float:
    scored = [p for p in result.probes if p.scored]
    return sum(p.hit for p in scored) / len(scored) if scored else 0.0


async def _forget(case: Scenario | Fixture, engine: Engine, ctx: CaseContext) -> None:
    try:
        if isinstance(case, Fixture):
            await ctx.watch.time("reset", engine.reset(ctx.result.tenant))
            return
        for name in case.tenants:
            await ctx.watch.time("forget", engine.forget(ctx.tenant(name)))
    except Unsupported:
        pass
    except EngineRefused as exc:
        _refused(ctx.result, exc)


def failed_result(
    case: Scenario | Fixture,
    *,
    run_id: str,
    trial: int,
    engine: str,
    reason: str,
    started_at: datetime,
    status: CaseStatus = CaseStatus.error,
    attempt: int = 0,
) -> CaseResult:
    """A result for a case that could not run to the end (its engine raised, the farm lost
    it): resumable, never scored."""
    return CaseResult(
        run_id=run_id,
        case_id=case.id,
        trial=trial,
        kind=case.kind,
        dimension=case.dimension.value if isinstance(case, Fixture) else None,
        engine=engine,
        tenant=tenant_base(run_id, case.id, trial, attempt),
        attempt=attempt,
        status=status,
        error=mended(reason),  # an engine's message may quote its own broken text
        started_at=started_at,
        finished_at=datetime.now(UTC),
    )
