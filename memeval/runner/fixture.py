"""Runs one dimension fixture: store its assertions, ask its queries, score every check."""

from __future__ import annotations

from memeval.engines.base import Engine
from memeval.engines.types import Capability, ConflictReport, QueryResult
from memeval.errors import CreditsExhausted, EngineRefused, EngineUnavailable, Unsupported
from memeval.llm.grading import hits_pack
from memeval.results import CheckResult, CheckStatus, QueryLog
from memeval.runner.answers import answer_query
from memeval.runner.context import CaseContext
from memeval.scoring.checks import acceptable, score_check
from memeval.suites.fixture import CheckKind, Fixture, Query


async def run_fixture(fixture: Fixture, engine: Engine, ctx: CaseContext) -> None:
    tenant = ctx.result.tenant
    for assertion in fixture.assertions:
        await ctx.watch.time("store", engine.store(tenant, assertion))
    ctx.watch.step = "probe"
    for index, query in enumerate(fixture.queries):
        try:
            result = await _ask(engine, tenant, query, ctx)
            conflicts = await _conflicts(engine, tenant, query, ctx)
        except (EngineUnavailable, CreditsExhausted, EngineRefused):  # not memory
            raise
        except Exception as exc:  # an engine failure on a query fails its checks, nothing more
            status = CheckStatus.unsupported if isinstance(exc, Unsupported) else CheckStatus.error
            ctx.result.checks.extend(
                CheckResult(
                    query=index,
                    kind=c.kind.value,
                    value=str(c.value),
                    status=status,
                    detail=f"{type(exc).__name__}: {exc}",
                )
                for c in query.checks
            )
            continue
        log = QueryLog(
            query=index,
            text=query.text,
            as_of=query.as_of,
            answer=result.answer,
            abstained=result.abstained,
            hits=[h.text for h in result.hits],
            conflicts=len(result.conflicts),
            acceptable_conflicts=acceptable(result.conflicts, query.acceptable_conflicts),
            tags=query.tags,
        )
        ctx.result.queries.append(log)
        await answer_query(query, hits_pack(result), log, ctx)
        ctx.result.checks.extend(
            score_check(index, c, result, conflicts, engine.capabilities) for c in query.checks
        )
    checks = ctx.result.checks
    ctx.result.score = sum(c.ok for c in checks) / len(checks) if checks else 0.0


async def _ask(engine: Engine, tenant: str, query: Query, ctx: CaseContext) -> QueryResult:
    if query.as_of is None:
        return await ctx.watch.time("query", engine.query(tenant, query.text, ctx.options.k))
    return await ctx.watch.time(
        "query_at", engine.query_at(tenant, query.text, query.as_of, ctx.options.k)
    )


async def _conflicts(
    engine: Engine, tenant: str, query: Query, ctx: CaseContext
) -> list[ConflictReport]:
    """Conflict checks may also be answered by asking the engine about one of the ids."""
    found: list[ConflictReport] = []
    if not engine.supports(Capability.conflicts):
        return found
    for check in (c for top in query.checks for c in top.flat()):
        if check.kind is CheckKind.conflict:
            found += await ctx.watch.time("conflicts", engine.conflicts(tenant, check.ids[0]))
    return found
