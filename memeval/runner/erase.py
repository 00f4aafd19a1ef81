"""The erase audit (`erase:` in a scenario): forget, let the engine settle, then search every
face it has for the canaries the forgotten writes held.

A deletion that only hides data from the first page of results is not a deletion: the audit
asks for packs, session starts, a context document, the fixture face's answer, the listing,
what the engine derived (facts, beliefs) and a fresh belief build, which is where enrichment
that was still draining would bring a forgotten write back. Before anything is forgotten, the
other tenants of the scenario are searched the same way, so isolation is measured beside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from time import monotonic

from pydantic import BaseModel

from memeval.engines.base import Engine
from memeval.engines.types import Turn, TurnContext
from memeval.errors import CreditsExhausted, EngineUnavailable, Unsupported
from memeval.results import CheckStatus, EraseCheck
from memeval.runner.context import CaseContext
from memeval.scoring.pack import contains
from memeval.suites.scenario import DEFAULT_AGENT, Erase, Scenario

AUDIT_THREAD = "erase-audit"


async def audit_erase(scenario: Scenario, engine: Engine, ctx: CaseContext) -> None:
    assert scenario.erase is not None
    erase = scenario.erase
    watch, out = ctx.watch, ctx.result.erase
    watch.step = "erase"
    for other in (t for t in scenario.tenants if t != erase.tenant):
        out += await search(scenario, engine, ctx, other, erase.canaries, "cross_tenant")
    if erase.by_id:
        out += await _forget_writes(scenario, engine, ctx, erase)
    tenant = ctx.tenant(erase.tenant)
    await watch.time("forget", engine.forget(tenant))
    listed = await _settled(engine, ctx, tenant, lambda ids: not ids)
    out.append(_listing("tenant", erase.tenant, listed, "the listing still shows writes"))
    out += await search(scenario, engine, ctx, erase.tenant, erase.canaries, "tenant")


async def _forget_writes(
    scenario: Scenario, engine: Engine, ctx: CaseContext, erase: Erase
) -> list[EraseCheck]:
    """`forget_write` for each `by_id` write (every turn of an exchange), then the search for
    the canaries only they held; an engine that cannot forget one write says so, once."""
    tenant = ctx.tenant(erase.tenant)
    before = len(await ctx.watch.time("list", engine.list(tenant)))
    turn_ids = [
        line.id
        for lines in scenario.thread_lines.values()
        for line in lines
        if line.evidence_id in erase.by_id
    ]
    written = {w.id for w in [*scenario.documents, *scenario.learnings]}
    ids = [w for w in erase.by_id if w in written] + turn_ids
    try:
        for write_id in ids:
            await ctx.watch.time("forget_write", engine.forget_write(tenant, write_id))
    except Unsupported as exc:
        return [
            EraseCheck(
                mode="by_id",
                face="forget_write",
                tenant=erase.tenant,
                status=CheckStatus.unsupported,
                detail=f"{exc}: only the whole tenant can be forgotten",
            )
        ]
    want = before - len(ids)
    listed = await _settled(engine, ctx, tenant, lambda seen: len(seen) <= want)
    checks = [_listing("by_id", erase.tenant, listed, f"the listing kept more than {want} writes")]
    gone = scenario.canaries_of(erase.by_id)
    return checks + await search(scenario, engine, ctx, erase.tenant, gone, "by_id")


async def _settled(
    engine: Engine, ctx: CaseContext, tenant: str, done: Callable[[list[str]], bool]
) -> bool:
    """The settle rule for a forget: poll the listing until it shows the forget, within the
    run's settle timeout. False when it never did (the audit still searches every face)."""
    deadline = monotonic() + ctx.options.settle_timeout
    while True:
        if done(await ctx.watch.time("list", engine.list(tenant))):
            return True
        if monotonic() > deadline:
            return False
        await asyncio.sleep(0.2)


def _listing(mode: str, name: str, settled: bool, why: str) -> EraseCheck:
    """Whether the listing showed the forget within the settle timeout."""
    if settled:
        return EraseCheck(mode=mode, face="settled", tenant=name)
    return EraseCheck(mode=mode, face="settled", tenant=name, status=CheckStatus.failed, detail=why)


async def search(
    scenario: Scenario,
    engine: Engine,
    ctx: CaseContext,
    name: str,
    canaries: list[str],
    mode: str,
    asking: Asking | None = None,
) -> list[EraseCheck]:
    """Every face of tenant `name`, each one check: which canaries came back in it. The
    questions and heading are the erase audit's unless `asking` gives others."""
    if asking is None:
        assert scenario.erase is not None
        asking = Asking(questions=scenario.erase.questions, heading=scenario.erase.heading)
    out: list[EraseCheck] = []
    for face, read in _faces(scenario, engine, ctx, name, asking).items():
        check = EraseCheck(mode=mode, face=face, tenant=name)
        try:
            texts = await read()
        except Unsupported as exc:
            check.status, check.detail = CheckStatus.unsupported, str(exc)
        except (EngineUnavailable, CreditsExhausted):
            raise
        except Exception as exc:  # an engine bug on one face: recorded, the audit goes on
            check.status, check.detail = CheckStatus.error, f"{type(exc).__name__}: {exc}"
        else:
            check.found = [c for c in canaries if any(contains(t, c) for t in texts)]
            if check.found:
                check.status = CheckStatus.failed
        out.append(check)
    return out


class Asking(BaseModel):
    """What a search asks the faces that take a question or a heading."""

    questions: list[str]
    heading: str | None = None


def _faces(
    scenario: Scenario, engine: Engine, ctx: CaseContext, name: str, erase: Asking
) -> dict[str, Callable[[], Awaitable[list[str]]]]:
    """What the engine shows of a tenant, by face; each read returns the texts to search."""
    tenant, watch = ctx.tenant(name), ctx.watch
    at = scenario.probe_end
    agents = sorted({DEFAULT_AGENT, *(t.agent for t in scenario.threads)})

    async def packs() -> list[str]:
        out = []
        for i, question in enumerate(erase.questions):
            turn = Turn(role="user", text=question, at=at, id=f"{AUDIT_THREAD}-{i}")
            for agent in agents:
                asked = TurnContext(agent=agent, thread=AUDIT_THREAD, turn=turn, log=False)
                out.append((await watch.time("pre_turn", engine.pre_turn(tenant, asked))).markdown)
        return out

    async def resume() -> list[str]:
        out = []
        for agent in agents:
            cold = await watch.time(
                "start_session", engine.start_session(tenant, agent, None, None, at)
            )
            out.append(cold.markdown)
            for question in erase.questions:
                focused = engine.start_session(tenant, agent, None, question, at)
                out.append((await watch.time("start_session", focused)).markdown)
        return out

    async def context() -> list[str]:
        heading = erase.heading or erase.questions[0]
        doc = engine.compile_context(tenant, DEFAULT_AGENT, heading, at)
        return [(await watch.time("compile_context", doc)).markdown]

    async def answer() -> list[str]:
        out = []
        for question in erase.questions:
            found = await watch.time("query", engine.query(tenant, question))
            out += [found.answer or "", *(h.text for h in found.hits)]
        return out

    async def listing() -> list[str]:
        return await watch.time("list", engine.list(tenant))

    async def derived() -> list[str]:
        seen = await watch.time("inspect", engine.inspect(tenant))
        return seen.facts + seen.beliefs

    async def beliefs() -> list[str]:
        built = await watch.time("build_beliefs", engine.build_beliefs(tenant))
        return [f"{b.subject} {b.value} {' '.join(b.disagreement)}" for b in built.beliefs]

    return {
        "pack": packs,
        "resume": resume,
        "context": context,
        "answer": answer,
        "listing": listing,
        "derived": derived,
        "beliefs": beliefs,
    }
