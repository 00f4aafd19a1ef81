"""Write-to-ranked lag (`lag: true` on a probe): how long after an engine acknowledges a write
a pack first ranks it.

Settle time says when the listing shows every write; an engine that indexes in the background
can list a write long before recall finds it, and an agent asking right after telling it
something meets that gap. The poll starts at the ack, asks with `log: false` (it writes
nothing), and gives up after the run's settle timeout, which is then recorded as unranked.
"""

from __future__ import annotations

import asyncio
from time import perf_counter

from memeval.engines.base import Engine
from memeval.engines.types import Turn, TurnContext
from memeval.results import LagResult, Phase, ProbeResult
from memeval.runner.context import CaseContext
from memeval.scoring.pack import score_pack
from memeval.suites.scenario import Probe, Scenario

POLL_S = 0.05


async def time_to_ranked(
    scenario: Scenario, probe: Probe, engine: Engine, ctx: CaseContext, acked: float
) -> None:
    """Poll from `acked` (a `perf_counter` reading) until a pack holds the probe's `expect`."""
    tenant = ctx.tenant(probe.tenant)
    question = Turn(role="user", text=probe.question, at=scenario.probe_end, id=f"lag-{probe.id}")
    asked = TurnContext(agent=probe.agent, thread=f"lag-{probe.id}", turn=question, log=False)
    blank = ProbeResult(
        probe=probe.id,
        phase=Phase.recall,
        via="ask",
        style=probe.style.value,
        scored=False,
        question=probe.question,
        expect=probe.expect,
    )
    result = LagResult(probe=probe.id, write=probe.evidence[0])
    step, ctx.watch.step = ctx.watch.step, "lag"  # kept out of the write and probe latencies
    try:
        while True:
            # Its own call name: a poll writes nothing, so it takes no write's idempotency key
            # (their order must not depend on how many polls a lag took).
            pack = await ctx.watch.time("lag_poll", engine.pre_turn(tenant, asked))
            result.polls += 1
            if score_pack(probe, pack.markdown, blank).hit:
                result.ms = (perf_counter() - acked) * 1000.0
                break
            if perf_counter() - acked > ctx.options.settle_timeout:
                break
            await asyncio.sleep(POLL_S)
    finally:
        ctx.watch.step = step
    ctx.result.lags.append(result)
