"""Which questions a model answers, what it sees for a fixture query, and how it is graded.

A probe's answer is graded by `grade_answer`, exactly like the extractive answer. A fixture
query is graded by its checks that speak about an answer's text; checks about hits, sources
or conflicts say nothing about an answer, and a query with only those is not asked at all.
"""

from __future__ import annotations

from datetime import datetime

from memeval.engines.types import QueryResult
from memeval.llm.prompt import is_unknown
from memeval.scoring.pack import contains
from memeval.suites.fixture import Check, CheckKind, Query
from memeval.suites.scenario import Probe

PACK_TITLE = "# Recalled memory"


def answerable_probe(probe: Probe) -> bool:
    """Leak checks are about the pack, not an answer: paying a model for them buys nothing."""
    return probe.scored


_TEXT_KINDS = (CheckKind.contains, CheckKind.abstain)


def answerable_query(query: Query) -> bool:
    return any(c.kind in _TEXT_KINDS for top in query.checks for c in top.flat())


def query_question(query: Query) -> str:
    return dated(query.text, query.as_of)


def probe_question(probe: Probe) -> str:
    return dated(probe.question, probe.as_of)


def dated(question: str, as_of: datetime | None) -> str:
    if as_of is None:
        return question
    return f"{question} (answer as of {as_of:%Y-%m-%d})"


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
    `contains` value and none of the values the checks rule out or rank below, each found with
    its check's `match`. An `any_of` is right when one of its alternatives grades right."""
    if answer is None:
        return False
    if any(c.kind is CheckKind.abstain for c in query.checks):
        return is_unknown(answer)
    return all(_grade(answer, c) for c in query.checks if _speaks(c))


def _speaks(check: Check) -> bool:
    """Whether a check says anything about an answer's text."""
    if check.kind in (CheckKind.any_of, CheckKind.all_of):
        return any(_speaks(c) for c in [*check.any_of, *check.all_of])
    return check.kind in (*_TEXT_KINDS, CheckKind.not_contains, CheckKind.not_first)


def _grade(answer: str, check: Check) -> bool:
    match check.kind:
        case CheckKind.any_of:
            return any(_grade(answer, c) for c in check.any_of if _speaks(c))
        case CheckKind.all_of:
            return all(_grade(answer, c) for c in check.all_of if _speaks(c))
        case CheckKind.abstain:
            return is_unknown(answer)
        case CheckKind.contains:
            return not is_unknown(answer) and contains(answer, check.text, check.match)
        case _:  # not_contains, not_first; an `unknown` fails the `contains` it goes with
            return not contains(answer, check.text, check.match)
