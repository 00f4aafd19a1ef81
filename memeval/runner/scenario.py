"""Runs one lifecycle scenario: write, settle, probe, synthesise, probe again, forget."""

from __future__ import annotations

import asyncio
from datetime import datetime
from time import monotonic, perf_counter
from typing import Any

from memeval.agent import ScriptedAgent, thread_turns
from memeval.engines.base import Engine
from memeval.engines.oracle import OracleEngine
from memeval.engines.types import Capability, MemoryItem, Pack, Turn, TurnContext
from memeval.errors import CreditsExhausted, EngineRefused, EngineUnavailable, Unsupported
from memeval.results import CaseStatus, CheckStatus, Phase, ProbeResult
from memeval.runner.answers import answer_probe
from memeval.runner.context import CaseContext
from memeval.runner.erase import audit_erase
from memeval.runner.host import HostLimits, host_view
from memeval.runner.lag import time_to_ranked
from memeval.runner.loop_guard import guard_loop
from memeval.scoring.evidence import score_evidence
from memeval.scoring.pack import captured, score_pack, units
from memeval.suites.noise import Distractor, distractors
from memeval.suites.scenario import Document, Learning, Probe, Scenario, Thread, Via


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
    if any(t.echo_packs for t in scenario.threads):
        await guard_loop(scenario, engine, ctx)
    if scenario.erase is not None:
        await audit_erase(scenario, engine, ctx)


async def _write(scenario: Scenario, engine: Engine, ctx: CaseContext) -> dict[str, int]:
    """Every write in time order: noise dated before the scenario's last write, the scenario's
    own writes (documents, learnings, then threads on a tie), then noise dated after it (a
    needle placed early or in the middle); returns how many writes each tenant got."""
    expected: dict[str, int] = {}

    def count(name: str, n: int = 1) -> None:
        expected[ctx.tenant(name)] = expected.get(ctx.tenant(name), 0) + n

    later: list[tuple[str, list[Distractor]]] = []
    if scenario.noise is not None:
        own = _own_writes(scenario)
        for name in scenario.noise.tenants or scenario.tenants:
            pad = scenario.noise.items - own.get(name, 0)
            if pad > 0:
                items = distractors(scenario, scenario.noise, name, pad)
                early = [d for d in items if d.at <= scenario.last_write]
                later.append((name, [d for d in items if d.at > scenario.last_write]))
                await _write_noise(scenario, name, early, engine, ctx)
                count(name, pad)
    agent = ScriptedAgent(engine, ctx.tenant, ctx.watch)
    writes: list[tuple[datetime, int, Document | Learning | Thread]] = []
    written: list[Document | Learning] = [*scenario.documents, *scenario.learnings]
    for item in written:
        writes.append((scenario.written_at(item), len(writes), item))
    for thread in scenario.threads:
        writes.append((scenario.thread_start(thread), len(writes), thread))
    timed = {p.evidence[0]: p for p in scenario.probes if p.lag}
    for at, _, write in sorted(writes, key=lambda w: (w[0], w[1])):
        if isinstance(write, Document | Learning):
            await ctx.watch.time(
                "ingest", engine.ingest(ctx.tenant(write.tenant), _item(write, at))
            )
            count(write.tenant)
            if write.id in timed:
                await time_to_ranked(scenario, timed[write.id], engine, ctx, perf_counter())
        else:
            count(write.tenant, await agent.run_thread(scenario, write))
    for name, items in later:
        await _write_noise(scenario, name, items, engine, ctx)
    return expected


def _item(written: Document | Learning, at: datetime) -> MemoryItem:
    common: dict[str, Any] = {
        "id": written.id,
        "text": written.text,
        "at": at,
        "trust": written.trust.value if written.trust else None,
        "supersedes": written.supersedes,
    }
    if isinstance(written, Document):
        return MemoryItem(title=written.title, **common)
    return MemoryItem(kind="learning", confidence=written.confidence, agent=written.agent, **common)


def _own_writes(scenario: Scenario) -> dict[str, int]:
    out: dict[str, int] = {}
    for w in [*scenario.documents, *scenario.learnings]:
        out[w.tenant] = out.get(w.tenant, 0) + 1
    for t in scenario.threads:
        out[t.tenant] = out.get(t.tenant, 0) + len(t.lines(scenario.thread_start(t)))
    return out


async def _write_noise(
    scenario: Scenario, name: str, items: list[Distractor], engine: Engine, ctx: CaseContext
) -> None:
    """Distractors as history threads through `write_history`, or as ingested notes."""
    assert scenario.noise is not None
    tenant = ctx.tenant(name)
    if scenario.noise.shape == "documents":
        for d in items:
            note = MemoryItem(id=d.id, title=f"Note from {d.speaker}", text=d.text, at=d.at)
            await ctx.watch.time("ingest", engine.ingest(tenant, note))
        return
    threads: dict[str, list[Turn]] = {}
    for d in items:
        turn = Turn(role="user", text=d.text, at=d.at, speaker=d.speaker, id=d.id)
        threads.setdefault(d.thread, []).append(turn)
    for thread, turns in threads.items():
        await ctx.watch.time("write_history", engine.write_history(tenant, "noise", thread, turns))


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
    texts, aliases = scenario.write_texts(), scenario.write_aliases()
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
            tags=probe.tags,
            abstain=probe.abstain,
            evidence=probe.evidence,
        )
        try:
            pack = await _ask(scenario, probe, engine, ctx, phase)
        except Unsupported as exc:
            result.status = CheckStatus.unsupported
            result.error = str(exc)
        except (EngineUnavailable, CreditsExhausted, EngineRefused):  # not memory
            raise
        except Exception as exc:  # an engine bug is a memory failure: score it, keep going
            result.status = CheckStatus.error
            result.error = f"{type(exc).__name__}: {exc}"
        else:
            result = score_pack(probe, pack.markdown, result, pack.abstained)
            result.pack_tokens = pack.tokens
            if ctx.options.host is not None:  # the engine's time for the pack, as timed
                waited = ctx.watch.timings[-1].ms
                _score_host_view(probe, pack, waited, ctx.options.host, result)
            if probe.evidence:
                found = score_evidence(
                    units(pack.markdown),
                    pack.unit_ids,
                    {e: texts[e] for e in probe.evidence},
                    aliases,
                )
                result.evidence_found, result.evidence_rank = found.found, found.rank
            if probe.scored and not result.hit:
                result.status = CheckStatus.failed
            await answer_probe(probe, result, ctx)
            if scenario.logs(probe) and probe.via in (Via.ask, Via.continue_):
                result.trace_removed = await _remove_trace(probe, engine, ctx)
        ctx.result.probes.append(result)


async def _remove_trace(probe: Probe, engine: Engine, ctx: CaseContext) -> bool:
    """Forget the question a probe logged, once it is scored, so no later probe is helped or
    misled by an earlier one; False where the engine can only forget whole tenants."""
    step, ctx.watch.step = ctx.watch.step, "clean"  # not the probe's latency
    try:
        forgotten = engine.forget_write(ctx.tenant(probe.tenant), _question_id(probe))
        await ctx.watch.time("forget_write", forgotten)
    except Unsupported:
        return False
    finally:
        ctx.watch.step = step
    return True


def _question_id(probe: Probe) -> str:
    return f"probe-{probe.id}"


def _score_host_view(
    probe: Probe, pack: Pack, elapsed_ms: float, limits: HostLimits, result: ProbeResult
) -> None:
    """The probe scored again on what the host pastes: nothing when the pack was late."""
    shown, late = host_view(pack.markdown, elapsed_ms, limits)
    if limits.deadline_ms is not None:
        result.late = late
    result.host_hit = score_pack(probe, shown, result, pack.abstained and not late).hit


async def _ask(
    scenario: Scenario, probe: Probe, engine: Engine, ctx: CaseContext, phase: Phase
) -> Pack:
    """One probe is one lifecycle call, chosen by its `via`."""
    tenant = ctx.tenant(probe.tenant)
    at = probe.as_of or scenario.probe_end  # `as_of`: the question is asked as at that moment
    watch = ctx.watch
    log = scenario.logs(probe)
    if isinstance(engine, OracleEngine):  # the one engine told the answer's writes
        evidence = set(probe.evidence)
        lines = [w for w, e in scenario.write_aliases().items() if e in evidence]
        engine.reveal(tenant, [*evidence, *lines])  # documents' and learnings' ids are their own
    question = Turn(role="user", text=probe.question, at=at, id=_question_id(probe))
    thread = next((t for t in scenario.threads if t.id == probe.thread), None)
    match probe.via:
        case Via.ask:
            turn_ctx = TurnContext(
                agent=probe.agent,
                thread=f"probe-{probe.id}-{phase.value}",
                turn=question,
                log=log,
            )
            return await watch.time("pre_turn", engine.pre_turn(tenant, turn_ctx))
        case Via.resume:
            return await watch.time(
                "start_session",
                engine.start_session(
                    tenant, probe.agent, probe.thread, probe.focus, at, question=probe.question
                ),
            )
        case Via.compact:
            assert thread is not None and probe.drop is not None
            turns = thread_turns(scenario, thread)
            return await watch.time(
                "recall_for_compaction",
                engine.recall_for_compaction(
                    tenant, probe.agent, thread.id, turns[: thread.line_index(probe.drop)]
                ),
            )
        case Via.continue_:
            assert thread is not None and probe.in_prompt_from is not None
            turns = thread_turns(scenario, thread)
            turn_ctx = TurnContext(
                agent=probe.agent,
                thread=thread.id,
                turn=question,
                in_prompt=turns[thread.line_index(probe.in_prompt_from) :],
                log=log,
            )
            return await watch.time("pre_turn", engine.pre_turn(tenant, turn_ctx))
        case Via.context_doc:
            assert probe.heading is not None
            return await watch.time(
                "compile_context",
                engine.compile_context(
                    tenant, probe.agent, probe.heading, at, question=probe.question
                ),
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
