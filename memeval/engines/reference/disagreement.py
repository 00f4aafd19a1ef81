"""Spotting sources that give different amounts of the same thing, so a pack can say so.

Two of a pack's leading items disagree when they come from different sources (a document, or
one agent's conversations) and state different amounts in the same unit ("five business days"
/ "10 business days") about the same topic. A turn whose value a later statement replaced
never gets here: packs drop it first (see `beliefs.SlotBook`).
"""

from __future__ import annotations

import re
from itertools import combinations

from memeval.engines.reference.index import ResolvedQuery, credit
from memeval.engines.reference.memory import Item, ItemKind
from memeval.engines.reference.text import STOPWORDS, stem, tokens

_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "ninety": "90"}
_AMOUNT = re.compile(
    r"(?<![\w.:])(\d+(?:\.\d+)?|"
    + "|".join(_NUMBER_WORDS)
    + r")\b\s*(%|[^\W\d_]+(?:\s+[^\W\d_]+)?)"
)
UNIT_WORDS = 2
TOP_ITEMS = 10


def amounts(text: str) -> dict[tuple[str, ...], set[str]]:
    """Unit -> the values the text gives in it; "5 days" and "five days" are one value."""
    out: dict[tuple[str, ...], set[str]] = {}
    for number, unit_text in _AMOUNT.findall(text.casefold().replace(",", "")):
        unit: list[str] = []
        for word in tokens(unit_text)[:UNIT_WORDS] if unit_text != "%" else ["%"]:
            if word in STOPWORDS:
                break
            unit.append(stem(word))
        if unit:
            out.setdefault(tuple(unit), set()).add(_NUMBER_WORDS.get(number, number))
    return out


def source_of(item: Item) -> str:
    return f"document:{item.id}" if item.kind is ItemKind.document else f"agent:{item.agent}"


def label_of(item: Item) -> str:
    if item.kind is ItemKind.document:
        return item.title or item.id
    when = f" on {item.at:%Y-%m-%d}" if item.at else ""
    return f"{item.agent or 'a conversation'}{when}"


def notes(items: list[Item], query: ResolvedQuery | None) -> dict[int, str]:
    """Item -> a note naming what disagrees with it, among the leading items.

    With a question, the unit must concern it (share a word with it, or the two items share
    two of its words); without one, the two items must share two words besides the unit.
    """
    stated = [i for i in items if i.kind in (ItemKind.turn, ItemKind.document)][:TOP_ITEMS]
    terms = [qt.term for qt in query.terms] if query else []
    matched = (
        {i.doc: {qt.term for qt in query.terms if credit(qt, i.terms)} for i in stated}
        if query
        else {}
    )
    found = {i.doc: amounts(i.text) for i in stated}
    out: dict[int, list[str]] = {}
    for a, b in combinations(stated, 2):
        if source_of(a) == source_of(b):
            continue
        for unit in found[a.doc].keys() & found[b.doc].keys():
            if found[a.doc][unit] & found[b.doc][unit]:
                continue  # an amount in common: more likely two views than a dispute
            if query is not None:
                topical = bool(set(unit) & set(terms)) or len(matched[a.doc] & matched[b.doc]) >= 2
            else:
                topical = len((a.terms & b.terms) - set(unit)) >= 2
            if topical:
                out.setdefault(a.doc, []).append(label_of(b))
                out.setdefault(b.doc, []).append(label_of(a))
    return {
        doc: "sources disagree: see also " + ", ".join(dict.fromkeys(labels))
        for doc, labels in out.items()
    }
