"""Packs for services that recall items but compose no markdown of their own.

memeval scores a pack's markdown, so a service that answers a recall with a list is given the
plainest faithful rendering: its items in its order, under the usual title, held to the same
token budget as the built-in engines. Nothing is re-ranked or dropped for relevance here.
"""

from __future__ import annotations

from datetime import datetime

from memeval.engines.pack import Section, render
from memeval.engines.types import Pack, Turn, TurnContext

BUDGET_TOKENS = 1500
RECALLED = "Recalled"


def pack_of(title: str, texts: list[str]) -> Pack:
    return render(title, [Section(title=RECALLED, bullets=texts)], BUDGET_TOKENS)


class SearchPacks:
    """The lifecycle reads of an engine whose only recall is a search: every pack is the
    search's answer to the moment's text, in the engine's order, held to the shared budget.
    Subclasses give `recall` and `post_turn`; one that must keep the prompt out of its packs
    gives `_hidden` (`memeval.models.local`)."""

    async def recall(self, tenant: str, text: str) -> list[str]:
        """The engine's texts for a non-empty query, best first."""
        raise NotImplementedError

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        raise NotImplementedError

    async def _pack(self, tenant: str, title: str, text: str, hide: tuple[str, ...] = ()) -> Pack:
        return pack_of(title, await self.recall(tenant, text) if text.strip() else [])

    def _hidden(self, ctx: TurnContext) -> tuple[str, ...]:
        """What the reply's pack leaves out: nothing, unless a subclass says so."""
        return ()

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        pack = await self._pack(tenant, "Context for the reply", ctx.turn.text, self._hidden(ctx))
        if ctx.log:  # a probe is recall only
            await self.post_turn(tenant, ctx.agent, ctx.thread, ctx.turn)
        return pack

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        return await self._pack(tenant, "Session start", question or focus or thread or "")

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        query = " ".join(t.text for t in dropped)
        return await self._pack(tenant, "Carried over from the compacted turns", query)
