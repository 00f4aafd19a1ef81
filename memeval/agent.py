"""The scripted agent: drives a scenario's threads through the lifecycle, exchange by exchange.

It behaves like a real agent loop would: recall before answering, then log the reply. Memory
only ever sees a tool call's name and id, so a tool result survives only because the agent
writes it into its reply text.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from memeval.engines.base import Engine
from memeval.engines.types import ToolCallRef, Turn, TurnContext
from memeval.stopwatch import Stopwatch
from memeval.suites.scenario import Exchange, Scenario, Thread

IN_PROMPT = 8
"""How many of a thread's latest turns a model still sees, so a pack must not repeat them."""


def exchange_turns(thread: Thread, start: datetime) -> list[Turn]:
    """Every turn of a thread, user then assistant, a minute apart from `start`."""
    turns: list[Turn] = []
    for i, exchange in enumerate(thread.exchanges):
        at = start + timedelta(minutes=2 * i)
        turns.append(Turn(role="user", text=exchange.user, at=at))
        turns.append(reply_turn(thread, i, exchange, at + timedelta(minutes=1)))
    return turns


def reply_turn(thread: Thread, index: int, exchange: Exchange, at: datetime) -> Turn:
    text = exchange.reply
    for tool in exchange.tools:
        text += f"\n{tool.name} returned: {tool.result}"
    calls = [
        ToolCallRef(name=tool.name, id=f"{thread.id}-{index}-{j}")
        for j, tool in enumerate(exchange.tools)
    ]
    return Turn(role="assistant", text=text, at=at, tool_calls=calls)


class ScriptedAgent:
    def __init__(self, engine: Engine, tenant: Callable[[str], str], watch: Stopwatch) -> None:
        self.engine = engine
        self.tenant = tenant
        self.watch = watch

    async def run_thread(self, scenario: Scenario, thread: Thread) -> int:
        """Play a thread; returns how many writes it made (each user turn and each reply)."""
        tenant = self.tenant(thread.tenant)
        turns = exchange_turns(thread, scenario.thread_start(thread))
        for i in range(0, len(turns), 2):
            user, reply = turns[i], turns[i + 1]
            ctx = TurnContext(
                agent=thread.agent,
                thread=thread.id,
                turn=user,
                in_prompt=turns[max(0, i - IN_PROMPT) : i],
            )
            await self.watch.time("pre_turn", self.engine.pre_turn(tenant, ctx))
            await self.watch.time(
                "post_turn", self.engine.post_turn(tenant, thread.agent, thread.id, reply)
            )
        return len(turns)
