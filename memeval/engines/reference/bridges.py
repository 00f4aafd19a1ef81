"""Answers over a chain of records joined by names they share, where the graph has no path.

The graph chains triples; prose has no edges to walk ("Order ORD-5817 is being picked at the
Tilbury fulfilment centre." / "The Tilbury fulfilment centre belongs to the North Sea region." /
"Customs for the North Sea region are handled by Haldane Brokers."). When a record about the
question's named entity leaves some of what the question asks uncovered, the chain follows a
name it introduces to the next record, up to `MAX_RECORDS` records, and ends on one that
covers most of what the earlier ones left (`MIN_GAIN`). A "which X" question also needs the
last record to hold the kind X. One of a chain's first two records has no triple: triples in a
row are the graph's to join, and it refused them.

Each link is a name the previous record brought in that no earlier record held, so a chain
never walks back nor around a loop, and a look-alike ("ORD-5871", the "Mersin fulfilment
centre") joins nothing it does not name. A later record must not name the question's entity
itself: then it would be a one-hop answer, ranked as such. The entity's own head noun ("ferry"
in "the Morvan ferry") is not asked about, it only says what the entity is; and a later record
using it describes a sibling ("the Ouessant ferry"), not the next link of the chain.

A question naming nothing ("the station nearest my sister") starts from a record holding some
of its words as written ("sister"; "relocated" for "lives" is no start), and then must ask for a
kind of thing, which the chain must reach.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from memeval.engines.reference.facts import Fact, FactStore
from memeval.engines.reference.index import QueryTerm, ResolvedQuery, credit
from memeval.engines.reference.names import name_heads, name_terms
from memeval.engines.reference.text import STOPWORDS, framing, stem, tokens

FIRST_HOPS = 3  # the best-ranked records tried as the first link
MAX_RECORDS = 3
MIN_GAIN = 0.5  # the last record must cover this share of what the earlier ones left
NEXT_HOPS = 10  # records looked at for each link
LINK_DIGITS = 3  # a shorter number is a count or a rank more often than an identifier
PASSING = 3  # records that cover nothing yet, followed further from each link
_COPULA_THE = [[verb, "the"] for verb in ("is", "are", "was", "were")]
_RANKING = frozenset(
    """
    nearest closest furthest farthest cheapest dearest latest earliest biggest largest
    smallest fastest quickest slowest oldest newest highest lowest longest shortest best worst
    first last next previous main
    """.split()
)


@dataclass(frozen=True)
class Bridge:
    records: tuple[str, ...]  # fact ids, from the question's entity to the answer
    coverage: float  # of the asked weight, the records together


@dataclass(frozen=True)
class _Search:
    store: FactStore
    usable: Callable[[str], bool]
    asked: list[QueryTerm]
    anchor: frozenset[str]  # the question's entity, as terms a later record must not hold all of
    heads: frozenset[str]
    kind: QueryTerm | None

    def chains(self, chain: tuple[Fact, ...], links: frozenset[str]) -> Iterator[tuple[Fact, ...]]:
        """Complete chains extending `chain` through one of `links` (see the module doc)."""
        held = frozenset().union(*(f.terms for f in chain))
        left = [qt for qt in self.asked if not credit(qt, held)]
        if not links or not left or len(chain) >= MAX_RECORDS:
            return
        seen = {f.id for f in chain}
        passing = 0
        index = self.store.index
        named = [QueryTerm(t, index.weight(t), ((t, 1.0),)) for t in sorted(links) if index.df(t)]
        probe = ResolvedQuery((*named, *left))  # a link matches as written, so no look-alikes
        for doc, _ in index.search(probe, NEXT_HOPS):
            nxt = self.store.fact_for_doc(doc)
            if (
                nxt is None
                or nxt.id in seen
                or not self.usable(nxt.id)
                or not links & nxt.terms
                or self.anchor <= nxt.terms
                or self.heads & nxt.terms
            ):
                continue
            extended = (*chain, nxt)
            if all(f.triple is not None for f in extended):
                continue  # two triples in a row are the graph's to join
            if _share(left, nxt.terms) >= MIN_GAIN:
                if self.kind is None or credit(self.kind, nxt.terms):
                    yield extended
                continue
            onward = _links(nxt) - held
            if onward and passing < PASSING:
                passing += 1
                yield from self.chains(extended, onward)


def bridge(
    question: str,
    store: FactStore,
    usable: Callable[[str], bool],
    query: ResolvedQuery,
    names: frozenset[str],
    ranked: list[str],
) -> Bridge | None:
    """The best chain from the question's entity, or None when one record does."""
    heads = name_heads(question, names)
    asked = [  # what some record could answer: a word nothing holds cannot be covered
        qt
        for qt in query.terms
        if qt.matches and qt.term not in names | heads and not framing(qt.term)
    ]
    kind = next((qt for qt in asked if qt.term == asked_kind(question)), None)
    if not ranked or (not names and kind is None):
        return None
    best: Bridge | None = None
    for fid in ranked[:FIRST_HOPS]:
        first = store.facts[fid]
        anchor = names or frozenset(qt.term for qt in asked if qt.term in first.terms)
        if not anchor:
            continue
        search = _Search(store, usable, asked, anchor, heads, kind)
        for chain in search.chains((first,), _links(first) - names):
            both = _share(asked, frozenset().union(*(f.terms for f in chain)))
            if best is None or (both, -len(chain)) > (best.coverage, -len(best.records)):
                best = Bridge(tuple(f.id for f in chain), both)
    return best


def asked_kind(question: str) -> str | None:
    """The word after "which" or "what" that names the kind of thing asked for ("Which
    village ..." -> village), past "is the" and the ranking words English puts before a head
    noun: "what is the nearest station" asks for a station, not for something near."""
    words = tokens(question)
    for i, word in enumerate(words[:-1]):
        if word in ("which", "what"):
            rest = words[i + 1 :]
            if rest[:2] in _COPULA_THE:
                rest = rest[2:]  # "what is the nearest station": the phrase follows
            for following in rest:
                if following in STOPWORDS:
                    return None
                if following not in _RANKING:
                    return stem(following)
            return None
    return None


def _links(fact: Fact) -> frozenset[str]:
    """The terms a record can pass on to the next one: its names, and its numbers that are
    no year ("cost centre 7720"), which join two records as surely as a name does."""
    numbers = {t for t in fact.terms if t.isdigit() and len(t) >= LINK_DIGITS and not framing(t)}
    return name_terms(fact.assertion.text) | numbers


def _share(asked: list[QueryTerm], present: frozenset[str]) -> float:
    total = sum(qt.weight for qt in asked)
    if total <= 0:
        return 0.0
    return sum(qt.weight * credit(qt, present) for qt in asked) / total
