"""Cases written inline, a recording engine, and a one-call runner for the format-v2 tests."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime
from typing import Any

import yaml

from memeval import clock
from memeval.engines.base import Engine
from memeval.engines.naive import NaiveEngine
from memeval.engines.types import Pack, Turn, TurnContext
from memeval.results import CaseResult, Phase, ProbeResult
from memeval.runner import RunOptions, run_case
from memeval.scoring.pack import score_pack
from memeval.suites.fixture import Fixture
from memeval.suites.loader import CASE_ADAPTER
from memeval.suites.scenario import Probe, Scenario


def case(text: str) -> Scenario | Fixture:
    return CASE_ADAPTER.validate_python(yaml.safe_load(text))


def scenario(text: str) -> Scenario:
    loaded = case(text)
    assert isinstance(loaded, Scenario)
    return loaded


def run(item: Scenario | Fixture, engine: Engine, keep: bool = False) -> CaseResult:
    """`keep` skips the forget step, so a test can look at what the engine holds."""
    options = RunOptions(keep=keep)
    return asyncio.run(
        run_case(item, engine, run_id=f"fmt-{uuid.uuid4().hex[:8]}", options=options)
    )


class Recording(NaiveEngine):
    """The naive engine, noting every lifecycle call, the turns it was given, the question
    sessions and context documents were asked with, and what the clock read."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.turns: list[Turn] = []
        self.questions: list[str | None] = []
        self.clock: list[datetime] = []

    def note(self, call: str) -> None:
        self.calls.append(call)
        self.clock.append(clock.now())

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        self.note("pre_turn" if ctx.log else "recall")
        self.turns.append(ctx.turn)
        return await super().pre_turn(tenant, ctx)

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        self.note("post_turn")
        self.turns.append(turn)
        return await super().post_turn(tenant, agent, thread, turn)

    async def write_history(
        self, tenant: str, agent: str, thread: str, turns: list[Turn]
    ) -> list[str]:
        self.note("write_history")
        self.turns += turns
        state = self._tenant(tenant)
        return [state.add(t.text, t.id or f"{thread}#{len(state.ids) + 1}") for t in turns]

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        self.note("start_session")
        self.questions.append(question)
        return await super().start_session(tenant, agent, thread, focus, at)

    async def compile_context(
        self, tenant: str, agent: str, heading: str, at: datetime, question: str | None = None
    ) -> Pack:
        self.note("compile_context")
        self.questions.append(question)
        return self._pack(tenant, heading, question or heading)

    async def query(self, tenant: str, text: str, k: int = 5) -> Any:
        self.note("query")
        return await super().query(tenant, text, k)


def scored_probe(probe: Probe, markdown: str) -> ProbeResult:
    """`probe` scored against a pack of `markdown`, as the runner scores a recall."""
    empty = ProbeResult(
        probe=probe.id,
        phase=Phase.recall,
        via="ask",
        style="lexical",
        scored=True,
        question=probe.question,
        expect=probe.expect,
    )
    return score_pack(probe, markdown, empty)
