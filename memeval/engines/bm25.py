"""`bm25`: plain BM25 over every write, the baseline practitioners compare memory against.

Each turn, document or assertion is one retrieval unit, tokenised by bm25s (English stopwords,
Snowball stemming) and scored with its Lucene BM25. Nothing else: no time, trust, graph,
provenance or abstention, so any engine that claims to remember must beat it on ranking alone.
Packs hold the top units in score order under the same token budget as the reference engine,
so evidence recall at equal pack size compares retrieval and nothing else.

bm25s builds a static index; the index is rebuilt from the stored tokens on the first query
after a write, so a conversation written in bulk pays one build, not one per turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING

from memeval.engines.base import Engine
from memeval.engines.pack import CHARS_PER_TOKEN, Section, render, turn_bullet
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

if TYPE_CHECKING:
    import bm25s

BUDGET_TOKENS = 1500  # the reference engine's pack budget: equal room, fair recall
RESULTS = "Search results"

TurnKey = tuple[str, float, str]


@cache
def _tokenizer_parts() -> tuple[object, object]:
    """bm25s and its stemmer, imported on first use: numpy costs a few hundred ms to load,
    which no run that never names this engine should pay."""
    import bm25s
    import Stemmer

    return bm25s, Stemmer.Stemmer("english")


def _tokens(texts: list[str]) -> list[list[str]]:
    bm25s, stemmer = _tokenizer_parts()
    tokenizer = bm25s.tokenization.Tokenizer(stopwords="en", stemmer=stemmer)  # type: ignore[attr-defined]
    return tokenizer.tokenize(texts, return_as="string", show_progress=False)  # type: ignore[no-any-return]


def _key(turn: Turn) -> TurnKey:
    return turn.role, turn.at.timestamp(), " ".join(turn.text.split())


@dataclass
class _Unit:
    id: str
    text: str  # what is searched
    bullet: str  # what a pack shows
    key: TurnKey | None = None  # a turn, recognised when handed back in `in_prompt`
    source: str | None = None  # the case's id for the write, echoed in `Pack.unit_ids`


@dataclass
class _Tenant:
    units: list[_Unit] = field(default_factory=list)
    tokens: list[list[str]] = field(default_factory=list)
    _index: bm25s.BM25 | None = None
    _indexed: int = 0

    def add(self, units: list[_Unit]) -> list[str]:
        self.units.extend(units)
        self.tokens.extend(_tokens([u.text for u in units]))
        return [u.id for u in units]

    def ranked(self, question: str) -> list[tuple[int, float]]:
        """Units sharing a term with the question, best first (the newer on ties)."""
        asked = _tokens([question])[0]
        if not asked or not self.units:
            return []
        index = self._current()
        scores = index.get_scores(asked)
        order = sorted(
            (i for i in range(len(self.units)) if scores[i] > 0),
            key=lambda i: (float(scores[i]), i),
            reverse=True,
        )
        return [(i, float(scores[i])) for i in order]

    def _current(self) -> bm25s.BM25:
        if self._index is None or self._indexed != len(self.units):
            bm25s, _ = _tokenizer_parts()
            index = bm25s.BM25()  # type: ignore[attr-defined]
            index.index(self.tokens, show_progress=False)
            self._index, self._indexed = index, len(self.units)
        return self._index


class BM25Engine(Engine):
    name = "bm25"
    capabilities = frozenset({Capability.store, Capability.lifecycle})
    verified_against = "bm25s (Lucene BM25) as published on PyPI"

    def __init__(self) -> None:
        self._tenants: dict[str, _Tenant] = {}

    def _tenant(self, tenant: str) -> _Tenant:
        if tenant not in self._tenants:
            self._tenants[tenant] = self.new_tenant()
        return self._tenants[tenant]

    def new_tenant(self) -> _Tenant:
        """A tenant's empty state, which ranks its units: `dense` and `hybrid` swap it."""
        return _Tenant()

    def _pack(self, tenant: str, title: str, question: str, hide: set[TurnKey]) -> Pack:
        state = self._tenants.get(tenant)
        ranked = state.ranked(question) if state else []
        room = BUDGET_TOKENS * CHARS_PER_TOKEN - len(title) - len(RESULTS) - 10
        kept: list[_Unit] = []
        for i, _ in ranked:
            assert state is not None
            unit = state.units[i]
            if unit.key is not None and unit.key in hide:
                continue
            cost = len(" ".join(unit.bullet.split())) + 3
            if cost <= room:  # a long unit that does not fit leaves room for shorter ones
                kept.append(unit)
                room -= cost
        pack = render(
            title, [Section(title=RESULTS, bullets=[u.bullet for u in kept])], BUDGET_TOKENS
        )
        pack.unit_ids = [[u.source] if u.source else [] for u in kept]
        return pack

    # ---- fixture face -------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        unit = _Unit(assertion.id, assertion.text, assertion.text, source=assertion.id)
        self._tenant(tenant).add([unit])

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        state = self._tenants.get(tenant)
        ranked = state.ranked(text)[:k] if state else []
        assert state is not None or not ranked
        return QueryResult(
            hits=[Hit(text=state.units[i].text, score=score) for i, score in ranked]  # type: ignore[union-attr]
        )

    async def reset(self, tenant: str) -> None:
        self._tenants.pop(tenant, None)

    # ---- lifecycle face -----------------------------------------------------------------

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        text = f"{item.title} {item.text}".strip()
        bullet = f"{item.title}: {item.text}" if item.title else item.text
        return self._tenant(tenant).add([_Unit(item.id, text, bullet, source=item.id)])[0]

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        hide = {_key(t) for t in ctx.in_prompt}
        pack = self._pack(tenant, "Context for the reply", ctx.turn.text, hide)
        if ctx.log:
            self._log(tenant, ctx.thread, [ctx.turn])
        return pack

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        return self._log(tenant, thread, [turn])[0]

    async def write_history(
        self, tenant: str, agent: str, thread: str, turns: list[Turn]
    ) -> list[str]:
        return self._log(tenant, thread, turns)

    def _log(self, tenant: str, thread: str, turns: list[Turn]) -> list[str]:
        state = self._tenant(tenant)
        start = len(state.units)
        units = [
            _Unit(
                id=f"{thread}#{start + n + 1}",
                text=f"{turn.speaker or ''} {turn.text}",  # who said it is searchable too
                bullet=turn_bullet(turn.speaker or turn.role, turn.at, turn.text),
                key=_key(turn),
                source=turn.id,
            )
            for n, turn in enumerate(turns)
        ]
        return state.add(units)

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        return self._pack(tenant, "Session start", focus or "", set())

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        query = " ".join(t.text for t in dropped)
        return self._pack(tenant, "Carried over", query, set())

    async def list(self, tenant: str) -> list[str]:
        state = self._tenants.get(tenant)
        return [u.id for u in state.units] if state else []

    async def forget(self, tenant: str) -> None:
        self._tenants.pop(tenant, None)
