"""A small in-memory engine with both faces, so runner and sweep tests need no real engine."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime

from memeval.engines.base import Engine
from memeval.engines.pack import Section, render
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
from memeval.scoring.pack import content_words


class WordEngine(Engine):
    """Recalls every line it holds that shares a word with the question."""

    name = "words"
    capabilities = frozenset(
        {Capability.store, Capability.lifecycle, Capability.abstain, Capability.context_doc}
    )

    def __init__(self) -> None:
        self.facts: dict[str, list[Assertion]] = defaultdict(list)
        self.lines: dict[str, list[tuple[str, str]]] = defaultdict(list)  # (id, text)
        self.calls: Counter[str] = Counter()

    # fixture face
    async def store(self, tenant: str, assertion: Assertion) -> None:
        self.calls["store"] += 1
        self.facts[tenant].append(assertion)

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        self.calls["query"] += 1
        asked = content_words(text)
        scored = [(len(asked & content_words(a.text)), a) for a in self.facts[tenant]]
        hits = [
            Hit(text=a.text, source=a.source, valid_from=a.valid_from, valid_to=a.valid_to)
            for n, a in sorted(scored, key=lambda s: -s[0])
            if n
        ][:k]
        return QueryResult(hits=hits, abstained=not hits)

    async def query_at(self, tenant: str, text: str, as_of: datetime, k: int = 5) -> QueryResult:
        return await self.query(tenant, text, k)

    async def reset(self, tenant: str) -> None:
        self.facts.pop(tenant, None)

    # lifecycle face
    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        self.calls["ingest"] += 1
        self.lines[tenant].append((item.id, f"{item.title} {item.text}".strip()))
        return item.id

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        self.calls["pre_turn"] += 1
        pack = self._pack(tenant, ctx.turn.text)
        if not ctx.thread.startswith("probe-"):  # a probe's question is not a memory
            self.lines[tenant].append((f"u{len(self.lines[tenant])}", ctx.turn.text))
        return pack

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        ident = f"a{len(self.lines[tenant])}"
        self.lines[tenant].append((ident, turn.text))
        return ident

    async def start_session(self, tenant, agent, thread, focus, at, question=None) -> Pack:
        return self._pack(tenant, focus or "")

    async def recall_for_compaction(self, tenant, agent, thread, dropped) -> Pack:
        return self._pack(tenant, " ".join(t.text for t in dropped))

    async def compile_context(self, tenant, agent, heading, at, question=None) -> Pack:
        return self._pack(tenant, heading)

    async def list(self, tenant: str) -> list[str]:
        return [ident for ident, _ in self.lines[tenant]]

    async def forget(self, tenant: str) -> None:
        self.lines.pop(tenant, None)

    def _pack(self, tenant: str, question: str) -> Pack:
        asked = content_words(question)
        found = [t for _, t in self.lines[tenant] if asked & content_words(t)]
        return render("Memory", [Section(title="Documents", bullets=found)], 1500)
