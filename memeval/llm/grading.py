"""Which questions a model answers, what it sees for a fixture query, and how it is graded.

A probe's answer is graded by `grade_answer`, exactly like the extractive answer. A fixture
query is graded by its checks that speak about an answer's text; checks about hits, sources
or conflicts say nothing about an answer, and a query with only those is not asked at all.
"""

from __future__ import annotations

from memeval.engines.types import QueryResult
from memeval.llm.prompt import is_unknown
from memeval.scoring.pack import contains
from memeval.suites.fixture import CheckKind, Query
from memeval.suites.scenario import Probe

PACK_TITLE = "# Recalled memory"


def answerable_probe(probe: Probe) -> bool:
    """Leak checks are about the pack, not an answer: paying a model for them buys nothing."""
    return probe.scored


def answerable_query(query: Query) -> bool:
    return any(c.kind in (CheckKind.contains, CheckKind.abstain) for c in query.checks)


def query_question(query: Query) -> str:
    if query.as_of is None:
        return query.text
    return f"{query.text} (answer as of {query.as_of:%Y-%m-%d})"


def hits_pack(found: QueryResult) -> str:
    """The hits as a pack, with the dates and sources that temporal questions turn on."""
    lines = [PACK_TITLE, ""]
    for hit in found.hits:
        notes = []
        if hit.valid_from is not None:
            notes.append(f"valid from {hit.valid_from:%Y-%m-%d}")
        if hit.valid_to is not None:
            notes.append(f"until {hit.valid_to:%Y-%m-%d}")
        if hit.source:
            notes.append(f"source: {hit.source}")
        text = " ".join(hit.text.split())
        lines.append(f"- {text}" + (f" ({'; '.join(notes)})" if notes else ""))
    return "\n".join(lines) + "\n"


def grade_query(answer: str | None, query: Query) -> bool:
    """An `abstain` query wants a clear `unknown`; otherwise the answer must hold every
    `contains` value and none of the values the checks rule out or rank below."""
    if answer is None:
        return False
    if any(c.kind is CheckKind.abstain for c in query.checks):
        return is_unknown(answer)
    if is_unknown(answer):
        return False
    wanted = [c.text for c in query.checks if c.kind is CheckKind.contains]
    banned = [
        c.text for c in query.checks if c.kind in (CheckKind.not_contains, CheckKind.not_first)
    ]
    return all(contains(answer, w) for w in wanted) and not any(contains(answer, b) for b in banned)
