"""Scoring one probe against the pack an engine returned.

Every match is a case-insensitive substring match. Positions count *units*: the non-empty
bullet and prose lines after the pack's title, headings excluded, in reading order.
"""

from __future__ import annotations

import re

from memeval.results import ProbeResult
from memeval.suites.scenario import Probe

_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if
    in into is it its me my no not of on or our should so than that the their them then there
    these they this to us was we were what when where which who whom why will with would you
    your about after again any all also am before being both each few more most other over
    same some such too very just only own up down out off once here s t""".split()
)


def units(markdown: str) -> list[str]:
    """The scoreable lines of a pack: bullets and prose, without the title or any heading."""
    out: list[str] = []
    for raw in markdown.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        out.append(line)
    return out


def contains(text: str, needle: str) -> bool:
    return needle.casefold() in text.casefold()


def rank(lines: list[str], needle: str) -> int | None:
    """1-based position of the first unit holding `needle`, or None."""
    for i, line in enumerate(lines, start=1):
        if contains(line, needle):
            return i
    return None


def content_words(text: str) -> set[str]:
    return {w.strip("'-") for w in _WORD.findall(text.casefold())} - STOPWORDS - {""}


def extractive_answer(lines: list[str], question: str) -> str:
    """The unit sharing the most non-stopword words with the question; earliest on ties."""
    asked = content_words(question)
    best, best_overlap = "", 0
    for line in lines:
        overlap = len(asked & content_words(line))
        if overlap > best_overlap:
            best, best_overlap = line, overlap
    return best


def grade_answer(answer: str | None, probe: Probe) -> bool:
    """Right when it holds every expected string (or an accepted wording) and no stale value."""
    if not answer:
        return False
    right = all(contains(answer, e) for e in probe.expect) or any(
        contains(answer, a) for a in probe.accept
    )
    return right and not any(contains(answer, s) for s in probe.stale)


def fresh_first(lines: list[str], probe: Probe) -> tuple[bool | None, bool | None]:
    """(fresh first, stale first) over a probe whose fact changed; (None, None) otherwise.

    Fresh first: the current value is present and precedes every superseded one that appears.
    Stale first: some superseded value appears before the current one (or without it).
    """
    if not probe.stale or not probe.expect:
        return None, None
    fresh = rank(lines, probe.expect[0])
    stale_ranks = [r for s in probe.stale if (r := rank(lines, s)) is not None]
    first_stale = min(stale_ranks, default=None)
    is_fresh = fresh is not None and (first_stale is None or fresh < first_stale)
    is_stale = first_stale is not None and (fresh is None or first_stale < fresh)
    return is_fresh, is_stale


def captured(derived: list[str], probe: Probe) -> bool:
    """Some fact or belief the engine derived holds every expected string."""
    return any(all(contains(text, e) for e in probe.expect) for text in derived)


def score_pack(probe: Probe, markdown: str, result: ProbeResult) -> ProbeResult:
    """Fill in the pack metrics of `result` for `probe`; the caller sets phase and answers."""
    lines = units(markdown)
    body = "\n".join(lines)
    hit = bool(probe.expect) and all(contains(body, e) for e in probe.expect)
    is_fresh, is_stale = fresh_first(lines, probe)
    answer = extractive_answer(lines, probe.question)
    return result.model_copy(
        update={
            "pack": markdown,
            "hit": hit,
            "rank": rank(lines, probe.expect[0]) if probe.expect else None,
            "fresh_first": is_fresh,
            "stale_first": is_stale,
            "leaked": [f for f in probe.forbidden if contains(markdown, f)],
            "extractive": answer,
            "extractive_ok": grade_answer(answer, probe),
        }
    )
