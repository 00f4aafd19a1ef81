"""The scripted agent: drives a scenario's threads through the lifecycle, turn by turn.

It behaves like a real agent loop would: recall before answering, then log the reply. Memory
only ever sees a tool call's name and id, so a tool result survives only where the case's
author had the agent write it into its reply text; the agent never appends it.
"""

from __future__ import annotations

from collections.abc import Callable

from memeval.engines.base import Engine
from memeval.engines.types import (
    INJECTED_CLOSE,
    INJECTED_OPEN,
    Pack,
    ToolCallRef,
    Turn,
    TurnContext,
)
from memeval.stopwatch import Stopwatch
from memeval.suites.scenario import Line, Scenario, Thread

IN_PROMPT = 8
"""How many of a thread's latest turns a model still sees, so a pack must not repeat them."""


INJECTED_NOTE = "Recalled by the memory system for this turn; not written by the user."
"""The host's own line inside an injected block: an engine that strips the markers but keeps
what they held still stores this, and the loop guard finds it."""


def injected(pack: Pack) -> str:
    """A pack as a careless host pastes it in front of the user's words."""
    return f"{INJECTED_OPEN}\n{INJECTED_NOTE}\n{pack.markdown.strip()}\n{INJECTED_CLOSE}\n\n"


def engine_turn(line: Line) -> Turn:
    calls = [ToolCallRef(name=t.name, id=f"{line.id}-{j}") for j, t in enumerate(line.tools)]
    return Turn(
        role=line.role,
        text=line.text,
        at=line.at,
        tool_calls=calls,
        speaker=line.speaker,
        id=line.id,
    )


def thread_turns(scenario: Scenario, thread: Thread) -> list[Turn]:
    """Every turn of a thread as the engine receives it, in order."""
    return [engine_turn(line) for line in thread.lines(scenario.thread_start(thread))]


class ScriptedAgent:
    def __init__(self, engine: Engine, tenant: Callable[[str], str], watch: Stopwatch) -> None:
        self.engine = engine
        self.tenant = tenant
        self.watch = watch

    async def run_thread(self, scenario: Scenario, thread: Thread) -> int:
        """Play a thread; returns how many writes it made (one per turn).

        A user turn is recalled for and logged by `pre_turn`, the agent's own turn by
        `post_turn`; a `bulk` thread is past history, loaded by one `write_history`."""
        tenant = self.tenant(thread.tenant)
        turns = thread_turns(scenario, thread)
        if thread.bulk:
            await self.watch.time(
                "write_history", self.engine.write_history(tenant, thread.agent, thread.id, turns)
            )
            return len(turns)
        pasted: Pack | None = None
        for i, turn in enumerate(turns):
            if turn.role == "assistant":
                await self.watch.time(
                    "post_turn", self.engine.post_turn(tenant, thread.agent, thread.id, turn)
                )
                continue
            sent = turn
            if thread.echo_packs and pasted is not None:
                sent = turn.model_copy(update={"text": injected(pasted) + turn.text})
            ctx = TurnContext(
                agent=thread.agent,
                thread=thread.id,
                turn=sent,
                in_prompt=turns[max(0, i - IN_PROMPT) : i],
            )
            pasted = await self.watch.time("pre_turn", self.engine.pre_turn(tenant, ctx))
        return len(turns)
