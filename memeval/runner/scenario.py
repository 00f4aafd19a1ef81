"""Runs one lifecycle scenario: write, settle, probe, synthesise, probe again, forget."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, time
from time import monotonic

from memeval.agent import ScriptedAgent, exchange_turns
from memeval.engines.base import Engine, EngineUnavailable, Unsupported
from memeval.engines.types import Capability, MemoryItem, Pack, Turn, TurnContext
from memeval.results import CaseStatus, CheckStatus, Phase, ProbeResult
from memeval.runner.answers import answer_probe
from memeval.runner.context import CaseContext
from memeval.scoring.pack import captured, score_pack
from memeval.suites.scenario import Probe, Scenario, Via


class SettleTimeout(Exception):
    pass


async def run_scenario(scenario: Scenario, engine: Engine, ctx: CaseContext) -> None:
    watch = ctx.watch
    expected = await _write(scenario, engine, ctx)

    watch.step = "settle"
    try:
        await _settle(engine, ctx, expected)
    except SettleTimeout as exc:
        ctx.result.status = CaseStatus.error
        ctx.result.error = str(exc)
        return

    watch.step = "probe"
    await _probe_all(scenario, engine, ctx, Phase.recall)

    watch.step = "synthesise"
    built = 0
    for name in scenario.tenants:
        try:
            report = await watch.time("build_beliefs", engine.build_beliefs(ctx.tenant(name)))
            built += report.built or len(report.beliefs)
        except Unsupported:
            break
    ctx.result.beliefs_built = built

    watch.step = "probe"
    await _probe_all(scenario, engine, ctx, Phase.synthesis)
    if engine.supports(Capability.inspect):
        await _mark_captured(scenario, engine, ctx)


async def _write(scenario: Scenario, engine: Engine, ctx: CaseContext) -> dict[str, int]:
    """Every write of the scenario, in time order; returns how many writes each tenant got."""
    expected: dict[str, int] = {}

    def count(name: str, n: int = 1) -> None:
        expected[ctx.tenant(name)] = expected.get(ctx.tenant(name), 0) + n

    start = datetime.combine(scenario.start, time(0), tzinfo=UTC)
    for doc in scenario.documents:
        item = MemoryItem(id=doc.id, title=doc.title, text=doc.text, at=start)
        await ctx.watch.time("ingest", engine.ingest(ctx.tenant(doc.tenant), item))
        count(doc.tenant)
    for learning in scenario.learnings:
        item = MemoryItem(
            id=learning.id,
            kind="learning",
            text=learning.text,
            confidence=learning.confidence,
            agent=learning.agent,
            at=start,
        )
        await ctx.watch.time("ingest", engine.ingest(ctx.tenant(learning.tenant), item))
        count(learning.tenant)
    agent = ScriptedAgent(engine, ctx.tenant, ctx.watch)
    for thread in sorted(scenario.threads, key=lambda t: (t.day, t.start)):
        count(thread.tenant, await agent.run_thread(scenario, thread))
    return expected


async def _settle(engine: Engine, ctx: CaseContext, expected: dict[str, int]) -> None:
    """Writes may be accepted before they are visible; wait until every one is listed."""
    deadline = monotonic() + ctx.options.settle_timeout
    for tenant, want in expected.items():
        while True:
            seen = len(await ctx.watch.time("list", engine.list(tenant)))
            if seen >= want:
                break
            if monotonic() > deadline:
                raise SettleTimeout(
                    f"only {seen} of {want} writes visible after "
                    f"{ctx.options.settle_timeout:g}s; the engine may be failing to index"
                )
            await asyncio.sleep(0.2)


async def _probe_all(scenario: Scenario, engine: Engine, ctx: CaseContext, phase: Phase) -> None:
    for probe in scenario.probes:
        result = ProbeResult(
            probe=probe.id,
            phase=phase,
            via=probe.via.value,
            style=probe.style.value,
            scored=probe.scored,
            question=probe.question,
            expect=probe.expect,
            stale=probe.stale,
            forbidden=probe.forbidden,
            accept=probe.accept,
        )
        try:
            pack = await _ask(scenario, probe, engine, ctx, phase)
        except Unsupported as exc:
            result.status = CheckStatus.unsupported
            result.error = str(exc)
        except EngineUnavailable:
            raise
        except Exception as exc:  # an engine bug is a memory failure: score it, keep going
            result.status = CheckStatus.error
            result.error = f"{type(exc).__name__}: {exc}"
        else:
            result = score_pack(probe, pack.markdown, result)
            result.pack_tokens = pack.tokens
            if probe.scored and not result.hit:
                result.status = CheckStatus.failed
            await answer_probe(probe, result, ctx)
        ctx.result.probes.append(result)


async def _ask(
    scenario: Scenario, probe: Probe, engine: Engine, ctx: CaseContext, phase: Phase
) -> Pack:
    """One probe is one lifecycle call, chosen by its `via`."""
    tenant = ctx.tenant(probe.tenant)
    at = scenario.probe_end
    watch = ctx.watch
    question = Turn(role="user", text=probe.question, at=at)
    thread = next((t for t in scenario.threads if t.id == probe.thread), None)
    match probe.via:
        case Via.ask:
            turn_ctx = TurnContext(
                agent=probe.agent, thread=f"probe-{probe.id}-{phase.value}", turn=question
            )
            return await watch.time("pre_turn", engine.pre_turn(tenant, turn_ctx))
        case Via.resume:
            return await watch.time(
                "start_session",
                engine.start_session(tenant, probe.agent, probe.thread, probe.focus, at),
            )
        case Via.compact:
            assert thread is not None and probe.drop is not None
            turns = exchange_turns(thread, scenario.thread_start(thread))
            return await watch.time(
                "recall_for_compaction",
                engine.recall_for_compaction(
                    tenant, probe.agent, thread.id, turns[: 2 * probe.drop]
                ),
            )
        case Via.continue_:
            assert thread is not None and probe.in_prompt_from is not None
            turns = exchange_turns(thread, scenario.thread_start(thread))
            turn_ctx = TurnContext(
                agent=probe.agent,
                thread=thread.id,
                turn=question,
                in_prompt=turns[2 * probe.in_prompt_from :],
            )
            return await watch.time("pre_turn", engine.pre_turn(tenant, turn_ctx))
        case Via.context_doc:
            assert probe.heading is not None
            return await watch.time(
                "compile_context", engine.compile_context(tenant, probe.agent, probe.heading, at)
            )
    raise AssertionError(f"unhandled via {probe.via}")


async def _mark_captured(scenario: Scenario, engine: Engine, ctx: CaseContext) -> None:
    derived: dict[str, list[str]] = {}
    for probe in scenario.probes:
        tenant = ctx.tenant(probe.tenant)
        if tenant not in derived:
            found = await ctx.watch.time("inspect", engine.inspect(tenant))
            derived[tenant] = found.facts + found.beliefs
    by_id = {p.id: p for p in scenario.probes}
    for result in ctx.result.probes:
        if result.phase is Phase.synthesis and result.scored:
            probe = by_id[result.probe]
            result.captured = captured(derived[ctx.tenant(probe.tenant)], probe)
