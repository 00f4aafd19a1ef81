"""Packs for services that recall items but compose no markdown of their own.

memeval scores a pack's markdown, so a service that answers a recall with a list is given the
plainest faithful rendering: its items in its order, under the usual title, held to the same
token budget as the built-in engines. Nothing is re-ranked or dropped for relevance here.
"""

from __future__ import annotations

from memeval.engines.pack import Section, render
from memeval.engines.types import Pack

BUDGET_TOKENS = 1500
RECALLED = "Recalled"


def pack_of(title: str, texts: list[str]) -> Pack:
    return render(title, [Section(title=RECALLED, bullets=texts)], BUDGET_TOKENS)
