"""`naive`: the keyword baseline every real engine should beat.

It keeps text and nothing else (no source, time, trust or links), ranks by how many lowercase
words a text shares with the question, and always answers with its top five, even when
nothing matches. Fixtures are written so that this engine fails what it cannot do: if it
passes a fixture, that fixture measures nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from memeval.engines.base import Engine
from memeval.engines.pack import CHARS_PER_TOKEN, DOCUMENTS, Section, render
from memeval.engines.types import (
    Assertion,
    Capability,
    Hit,
    MemoryItem,
    Pack,
    QueryResult,
    Turn,
    TurnContext,
)

TOP_K = 5
BUDGET_TOKENS = 1500
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


@dataclass
class _Tenant:
    texts: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)

    def add(self, text: str, item_id: str) -> str:
        self.texts.append(text)
        self.ids.append(item_id)
        return item_id

    def ranked(self, question: str) -> list[str]:
        """By shared words, then the newer first; zero overlap still ranks."""
        asked = _words(question)
        order = sorted(
            range(len(self.texts)),
            key=lambda i: (len(asked & _words(self.texts[i])), i),
            reverse=True,
        )
        return [self.texts[i] for i in order]


class NaiveEngine(Engine):
    name = "naive"
    capabilities = frozenset({Capability.store, Capability.lifecycle})

    def __init__(self) -> None:
        self._tenants: dict[str, _Tenant] = {}

    def _tenant(self, tenant: str) -> _Tenant:
        return self._tenants.setdefault(tenant, _Tenant())

    def _pack(self, tenant: str, title: str, question: str) -> Pack:
        texts = self._tenants[tenant].ranked(question) if tenant in self._tenants else []
        room = BUDGET_TOKENS * CHARS_PER_TOKEN
        kept: list[str] = []
        for text in texts:  # stop early: `render` trims one bullet at a time
            room -= len(text) + 3
            if room < 0:
                break
            kept.append(text)
        return render(title, [Section(title=DOCUMENTS, bullets=kept)], BUDGET_TOKENS)

    # ---- fixture face -------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        self._tenant(tenant).add(assertion.text, assertion.id)

    async def query(self, tenant: str, text: str, k: int = TOP_K) -> QueryResult:
        state = self._tenants.get(tenant)
        texts = state.ranked(text)[:k] if state else []
        return QueryResult(hits=[Hit(text=t) for t in texts])

    async def reset(self, tenant: str) -> None:
        self._tenants.pop(tenant, None)

    # ---- lifecycle face -----------------------------------------------------------------

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        return self._tenant(tenant).add(f"{item.title} {item.text}".strip(), item.id)

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        pack = self._pack(tenant, "Context for the reply", ctx.turn.text)
        if ctx.log:
            state = self._tenant(tenant)
            state.add(ctx.turn.text, f"{ctx.thread}#{len(state.ids) + 1}")
        return pack

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        state = self._tenant(tenant)
        return state.add(turn.text, f"{thread}#{len(state.ids) + 1}")

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        return self._pack(tenant, "Session start", focus or "")

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        return self._pack(tenant, "Carried over", " ".join(t.text for t in dropped))

    async def list(self, tenant: str) -> list[str]:
        state = self._tenants.get(tenant)
        return list(state.ids) if state else []

    async def forget(self, tenant: str) -> None:
        self._tenants.pop(tenant, None)
