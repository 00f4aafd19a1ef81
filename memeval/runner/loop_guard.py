"""The loop guard: after a thread whose careless host pasted each recalled pack into the next
user turn (`echo_packs`), no face of the engine may hold a copy of an injected block.

An engine that stores the block recalls it next turn, which the host pastes again, so memory
fills with copies of itself and every pack grows more of its own echo. The search looks for the
markers and for the host's own line inside the block, which survives an engine that strips
only the markers.
"""

from __future__ import annotations

from memeval.agent import INJECTED_NOTE
from memeval.engines.base import Engine
from memeval.engines.types import INJECTED_CLOSE, INJECTED_OPEN
from memeval.runner.context import CaseContext
from memeval.runner.erase import Asking, search
from memeval.suites.scenario import Scenario

SIGNS = [INJECTED_OPEN, INJECTED_CLOSE, INJECTED_NOTE]


async def guard_loop(scenario: Scenario, engine: Engine, ctx: CaseContext) -> None:
    echoed = sorted({t.tenant for t in scenario.threads if t.echo_packs})
    step, ctx.watch.step = ctx.watch.step, "loop_guard"
    try:
        for name in echoed:
            asking = Asking(questions=[p.question for p in scenario.probes if p.tenant == name])
            ctx.result.erase += await search(
                scenario, engine, ctx, name, SIGNS, "loop_guard", asking
            )
    finally:
        ctx.watch.step = step
