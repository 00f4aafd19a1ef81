"""The passage of its source that supports an assertion: what a reader checks it against.

It is also searched: a question may use the source's own words ("vehicles heavier than 7.5
tonnes are prohibited") rather than the assertion's ("weight limit"), so `facts.index_terms`
indexes the passage with the assertion.
"""

from __future__ import annotations

from memeval.engines.reference.text import normalise, sentences, terms
from memeval.engines.types import HitSpan
from memeval.suites.fixture import Assertion


def span(a: Assertion) -> HitSpan:
    """The stated span; else the excerpt sentence that best supports the fact; else its text."""
    base = a.excerpt or a.text
    if a.span is not None:
        return HitSpan(start=a.span.start, end=a.span.end, text=base[a.span.start : a.span.end])
    if a.excerpt:
        best = _supporting_sentence(a, a.excerpt)
        start = a.excerpt.find(best)
        if best and start >= 0:
            return HitSpan(start=start, end=start + len(best), text=best)
    return HitSpan(start=0, end=len(base), text=base)


def _supporting_sentence(a: Assertion, excerpt: str) -> str:
    wanted = set(terms(a.text))
    value = normalise(a.object or "")

    def support(sentence: str) -> tuple[bool, int]:
        has_value = bool(value) and value in normalise(sentence)
        return has_value, len(wanted & set(terms(sentence)))

    return max(sentences(excerpt), key=support, default="")
