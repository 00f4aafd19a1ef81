"""Two-hop answers over records that carry no triple, joined by a name they share.

The graph chains triples; prose has no edges to walk ("The Harlan clinic sends its samples to
the Vireo laboratory." / "The Vireo laboratory is run by Dr Ama Boateng.").
When a record about the question's named entity leaves some of what the question asks
uncovered, and a record that shares another name with it (see `names`) covers most of that
(`MIN_GAIN`), the two answer joined as one path. A "which X" question also needs the second
record to hold the kind X.

The second record must not name the question's entity itself: then it would be a one-hop
answer, ranked as such. The entity's own head noun ("ferry" in "the Morvan ferry") is not asked
about, it only says what the entity is; and a second record using it describes a sibling ("the
Ouessant ferry"), not the next link of the chain, so it is no second hop either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memeval.engines.reference.facts import FactStore
from memeval.engines.reference.index import QueryTerm, ResolvedQuery, credit
from memeval.engines.reference.names import name_heads, name_terms
from memeval.engines.reference.text import STOPWORDS, framing, stem, tokens

FIRST_HOPS = 3  # the best-ranked records tried as the first hop
MIN_GAIN = 0.5  # the second hop must cover this share of what the first one left
SECOND_HOPS = 10  # records looked at for each first hop


@dataclass(frozen=True)
class Bridge:
    first: str
    second: str
    coverage: float  # of the asked weight, the two records together


def bridge(
    question: str,
    store: FactStore,
    usable: Callable[[str], bool],
    query: ResolvedQuery,
    names: frozenset[str],
    ranked: list[str],
) -> Bridge | None:
    """The best two-record chain from the question's entity, or None when one record does."""
    heads = name_heads(question, names)
    asked = [  # what some record could answer: a word nothing holds cannot be covered
        qt
        for qt in query.terms
        if qt.matches and qt.term not in names | heads and not framing(qt.term)
    ]
    kind = next((qt for qt in asked if qt.term == asked_kind(question)), None)
    if not names or not ranked:
        return None
    best: Bridge | None = None
    for fid in ranked[:FIRST_HOPS]:
        first = store.facts[fid]
        links = name_terms(first.assertion.text) - names
        left = [qt for qt in asked if not credit(qt, first.terms)]
        if first.triple is not None or not links or not left:
            continue
        probe = store.index.resolve([*sorted(links), *(qt.term for qt in left)])
        for doc, _ in store.index.search(probe, SECOND_HOPS):
            second = store.fact_for_doc(doc)
            if (
                second is None
                or second.id == fid
                or second.triple is not None
                or not usable(second.id)
                or not links & second.terms
                or names <= second.terms
                or heads & second.terms
                or _share(left, second.terms) < MIN_GAIN
            ):
                continue
            both = _share(asked, first.terms | second.terms)
            if kind is not None and not credit(kind, second.terms):
                continue
            if best is None or both > best.coverage:
                best = Bridge(fid, second.id, both)
    return best


def asked_kind(question: str) -> str | None:
    """The term right after "which" or "what", when it is a content word: the kind of thing
    asked for ("Which village ..." -> village)."""
    words = tokens(question)
    for i, word in enumerate(words[:-1]):
        if word in ("which", "what"):
            following = words[i + 1]
            return None if following in STOPWORDS else stem(following)
    return None


def _share(asked: list[QueryTerm], present: frozenset[str]) -> float:
    total = sum(qt.weight for qt in asked)
    if total <= 0:
        return 0.0
    return sum(qt.weight * credit(qt, present) for qt in asked) / total
