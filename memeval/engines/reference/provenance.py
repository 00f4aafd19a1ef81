"""Provenance of a hit: which source, which span, which facts it rests on, who agrees.

A reader checking an answer needs the passage to read (the span), the chain back to original
observations (derivation) and every independent source behind it (corroboration), so each hit
carries all three rather than only the source of the one row that matched.
"""

from __future__ import annotations

from memeval.engines.reference.facts import Status, View
from memeval.engines.reference.spans import span
from memeval.engines.reference.text import normalise
from memeval.engines.types import Hit


def derivation(view: View, fid: str) -> list[str]:
    """Ids this fact was derived from, nearest first, back to the roots; cycles are cut."""
    out: list[str] = []
    seen = {fid}
    frontier = [fid]
    while frontier:
        nxt: list[str] = []
        for current in frontier:
            fact = view.store.facts.get(current)
            for parent in fact.assertion.derived_from if fact else ():
                if parent not in seen:
                    seen.add(parent)
                    out.append(parent)
                    nxt.append(parent)
        frontier = nxt
    return out


def sources(view: View, fids: list[str]) -> list[str]:
    """Own sources, then those of every ancestor, then those of corroborating assertions."""
    out: list[str] = []
    chain = [*fids, *(d for fid in fids for d in derivation(view, fid))]
    for fid in chain:
        _append(out, view, fid)
    for fid in fids:
        fact = view.store.facts[fid]
        twins = list(view.store.same_text.get(normalise(fact.assertion.text), ()))
        if fact.triple is not None:
            twins += view.store.same_triple.get(fact.triple, ())
        for twin in twins:
            if view.status(twin) not in (Status.retracted, Status.unrecorded, Status.retraction):
                _append(out, view, twin)
    return out


def _append(out: list[str], view: View, fid: str) -> None:
    fact = view.store.facts.get(fid)
    if fact is not None and fact.assertion.source not in out:
        out.append(fact.assertion.source)


def fact_hit(view: View, fid: str, score: float) -> Hit:
    a = view.store.facts[fid].assertion
    return Hit(
        text=a.text,
        source=a.source,
        span=span(a),
        confidence=a.confidence,
        assertion_id=a.id,
        valid_from=a.valid_from,
        valid_to=a.valid_to,
        derivation=derivation(view, fid),
        sources=sources(view, [fid]),
        score=round(score, 4),
    )


def joined_hit(view: View, fids: list[str], score: float) -> Hit:
    """One hit standing for several facts: a multi-hop path or the rows of a reverse look-up.

    Its span and source are those of the last fact, the one that holds the answer; its
    derivation lists every fact joined, then what those were derived from.
    """
    facts = [view.store.facts[f].assertion for f in fids]
    last = view.store.facts[fids[-1]]
    chain = list(fids)
    for fid in fids:
        chain.extend(d for d in derivation(view, fid) if d not in chain)
    confidence = 1.0
    for a in facts:
        confidence *= a.confidence
    starts = [a.valid_from for a in facts if a.valid_from]
    ends = [a.valid_to for a in facts if a.valid_to]
    return Hit(
        text=" ".join(a.text.strip() for a in facts),
        source=last.assertion.source,
        span=span(last.assertion),
        confidence=round(confidence, 4),
        valid_from=max(starts, default=None),
        valid_to=min(ends, default=None),
        derivation=chain,
        sources=sources(view, fids),
        score=round(score, 4),
    )
