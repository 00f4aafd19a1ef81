"""Structured readings of a question over the entity graph.

A question that names a known entity may ask about one of its edges, in either direction, or
about something a few edges away. The heuristics, all generic:

- *Attribute words* are the question's content terms outside fully written entity names. A
  reading must cover some of them with the words of its last edge: the predicate's words
  ("reports_to" -> report) or the name at its far end ("Berlin office" covers "office").
- *Direction* of a one-edge reading is plain when the entity stands on one side only of the
  predicate's edges ("Which desk is assigned to Ana?" can only read Ana's own desk). When it
  stands on both, word order decides: the entity written before the predicate phrase is its
  subject ("Who does Ana report to?" -> forward), after it is its object ("Who reports to
  Ana?" -> reverse). A question in the passive ("by" after the predicate word: "Who is managed
  by Ana?", "Who is Ana managed by?") flips this for an active predicate, and an active
  question flips it for a passive predicate ("What does Ana maintain?" over `maintained_by`
  -> Ana is the object); the two passives cancel ("Who is mentored by Ana?" over
  `mentored_by` -> reverse). A reading matched only through the far-end name is forward: a
  name describes the thing reached.
- *Multi-hop* readings walk forward edges up to three deep, each node expanded once (so cycles
  end) and a bounded number of edges looked at (so hubs stay cheap), and keep the path whose
  edges cover the most attribute weight; its last edge must cover something, and on a tie the
  shorter path wins. A path may not reach the relation asked about through an unasked detour
  when the entity has that relation itself: "Who hosts X?" follows X's own `hosted_in`, never
  the `hosted_in` of a service X depends on; "Who owns the service X depends on?" may still walk
  `depends_on` -> `owned_by` past X's own `owned_by`, since it asks for that first step.
- Coverage is weighed by match credit, so a predicate named in the question's own words beats
  one reached through a related word.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from memeval.engines.reference.facts import Fact
from memeval.engines.reference.graph import Graph, Mention
from memeval.engines.reference.index import ResolvedQuery, credit
from memeval.engines.reference.text import placed_terms, predicate_words, terms, tokens
from memeval.suites.fixture import Assertion

MAX_HOPS = 3
CLUSTER_GAP = 2  # attribute words this close belong to one phrase of the question


class Kind(StrEnum):
    forward = "forward"  # the entity's own values for a predicate
    reverse = "reverse"  # who/what has the entity as the value of a predicate
    path = "path"  # a chain of edges ending in the answer


@dataclass(frozen=True)
class Reading:
    kind: Kind
    facts: tuple[str, ...]  # answering facts, or the path's edges in order
    score: float  # attribute weight covered, 0..1
    hops: int


@dataclass(frozen=True)
class _Question:
    mentions: list[Mention]
    attributes: dict[str, list[int]]  # attribute term -> its token positions
    weights: dict[str, float]
    clusters: list[frozenset[str]]  # attribute terms written together: one phrase each
    resolved: ResolvedQuery
    by_at: list[int]  # token positions of "by"

    @property
    def total(self) -> float:
        return sum(self.weights[t] for cluster in self.clusters for t in cluster)


def read(
    question: str,
    query: ResolvedQuery,
    graph: Graph,
    facts: dict[str, Fact],
    usable: Callable[[str], bool],
) -> Reading | None:
    """The best structured reading of `question`, or None when no entity and edge fit."""
    q = _analyse(question, query, graph)
    if q is None:
        return None
    best: tuple[tuple[float, float, int], Reading] | None = None
    for mention in q.mentions:
        for reading, terminal in _one_edge(q, mention, graph, facts, usable):
            best = _better(best, reading, terminal)
        for reading, terminal in _paths(q, mention, graph, facts, usable):
            best = _better(best, reading, terminal)
    return best[1] if best else None


def _better(
    best: tuple[tuple[float, float, int], Reading] | None, reading: Reading, terminal: float
) -> tuple[tuple[float, float, int], Reading]:
    key = (round(reading.score, 6), round(terminal, 6), -reading.hops)
    if best is None or key > best[0]:
        return key, reading
    return best


def attributes(question: str, mentions: list[Mention]) -> dict[str, list[int]]:
    """Content terms outside fully written names, with their token positions.

    A single distinctive word of a name ("squad" for "Atlas squad") stays an attribute as
    well: it may be the type of thing asked for, which a path must then reach.
    """
    inside = {i for m in mentions if m.full for i in range(m.start, m.end)}
    out: dict[str, list[int]] = {}
    for i, term in placed_terms(question):
        if i not in inside:
            out.setdefault(term, []).append(i)
    return out


def _analyse(question: str, query: ResolvedQuery, graph: Graph) -> _Question | None:
    mentions = graph.mentions(question)
    if not mentions:
        return None
    words = tokens(question)
    attributes_ = attributes(question, mentions)
    weights = {qt.term: qt.weight for qt in query.terms if qt.term in attributes_}
    if not weights or sum(weights.values()) <= 0:
        return None
    by_at = [i for i, word in enumerate(words) if word == "by"]
    return _Question(mentions, attributes_, weights, _clusters(attributes_, weights), query, by_at)


def _clusters(attributes_: dict[str, list[int]], weights: dict[str, float]) -> list[frozenset[str]]:
    """Attribute terms at most `CLUSTER_GAP` tokens apart, in question order: "the manager of
    X's manager" has two ("manager", "manager"), so it asks for two edges. A term met again
    starts a new phrase however close: "X's manager's manager" asks for two edges as well."""
    placed = sorted((i, t) for t, spots in attributes_.items() if t in weights for i in spots)
    out: list[set[str]] = []
    last = None
    for i, term in placed:
        if last is None or i - last > CLUSTER_GAP or term in out[-1]:
            out.append(set())
        out[-1].add(term)
        last = i
    return [frozenset(c) for c in out]


def _covered(q: _Question, present: set[str]) -> dict[str, float]:
    """Attribute term -> the credit `present` earns it (a related word less than the word)."""
    out: dict[str, float] = {}
    for qt in q.resolved.terms:
        if qt.term in q.weights and (value := credit(qt, present)):
            out[qt.term] = value
    return out


def _union(*covers: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for cover in covers:
        for term, value in cover.items():
            out[term] = max(out.get(term, 0.0), value)
    return out


def _score(q: _Question, predicates: list[dict[str, float]], names: dict[str, float]) -> float:
    """Share of the question's attribute weight a reading covers.

    A name on the reading (a far-end entity) counts wherever the question uses its words. A
    predicate explains words of one cluster only, those no earlier edge explained there. So
    "X's manager's manager" needs two `manager` edges (one edge scores half), while "X's
    operator's base" lets two edges share one cluster, each with its own word.
    """
    explained: dict[tuple[int, str], float] = {}
    for covered in predicates:
        gains = {
            i: sum(
                q.weights[t] * covered[t]
                for t in cluster
                if t in covered and (i, t) not in explained
            )
            for i, cluster in enumerate(q.clusters)
        }
        best = max(gains, key=lambda i: (gains[i], -i), default=None)
        if best is not None and gains[best] > 0:
            for t in q.clusters[best] & covered.keys():
                explained.setdefault((best, t), covered[t])
    held = sum(
        q.weights[t] * max(explained.get((i, t), 0.0), names.get(t, 0.0))
        for i, cluster in enumerate(q.clusters)
        for t in cluster
    )
    return held / q.total


def _one_edge(
    q: _Question,
    mention: Mention,
    graph: Graph,
    facts: dict[str, Fact],
    usable: Callable[[str], bool],
) -> list[tuple[Reading, float]]:
    groups: dict[Kind, dict[str, list[Fact]]] = {}
    for kind, edges in ((Kind.forward, graph.out_edges), (Kind.reverse, graph.in_edges)):
        groups[kind] = {}
        for fid in edges.get(mention.node, ()):
            fact = facts.get(fid)
            if fact is not None and fact.assertion.predicate and usable(fid):
                groups[kind].setdefault(fact.slot[1] if fact.slot else "", []).append(fact)
    out: list[tuple[Reading, float]] = []
    for kind, by_kind in groups.items():
        other = groups[Kind.reverse if kind is Kind.forward else Kind.forward]
        for predicate, group in by_kind.items():
            by_predicate = _covered(q, set(terms(predicate_words(predicate))))
            far = set()
            if kind is Kind.forward:
                for fact in group:
                    far.update(terms(fact.assertion.object or ""))
            by_name = _covered(q, far)
            if not by_predicate and not by_name:
                continue
            if by_predicate and predicate in other:
                passive = "by" in tokens(predicate_words(predicate))
                if kind is not _direction(q, mention, by_predicate, passive):
                    continue  # the entity stands on both sides of it: word order decides
            if not by_predicate and kind is Kind.reverse:
                continue
            score = _score(q, [by_predicate], by_name)
            out.append((Reading(kind, tuple(f.id for f in group), score, 1), score))
    return out


def _direction(
    q: _Question, mention: Mention, predicate_terms: dict[str, float], passive_predicate: bool
) -> Kind:
    first = min(min(q.attributes[t]) for t in predicate_terms)
    entity_first = mention.start < first
    if (first < max(q.by_at, default=-1)) != passive_predicate:
        entity_first = not entity_first
    return Kind.forward if entity_first else Kind.reverse


def _paths(
    q: _Question,
    mention: Mention,
    graph: Graph,
    facts: dict[str, Fact],
    usable: Callable[[str], bool],
) -> list[tuple[Reading, float]]:
    direct: set[str] = set()
    for fid in graph.out_edges.get(mention.node, ()):
        fact = facts.get(fid)
        if fact is not None and usable(fid):
            direct.update(_covered(q, _predicate_terms(fact)))
    out: list[tuple[Reading, float]] = []
    for path in graph.walk(mention.node, MAX_HOPS, usable, facts):
        if len(path.edges) < 2:
            continue  # one edge is a direct reading, weighed with its direction above
        first, *later = (facts[fid] for fid in path.edges)
        opening = _covered(q, _predicate_terms(first))
        if not opening and any(direct & _covered(q, _predicate_terms(f)).keys() for f in later):
            continue  # an unasked detour past the entity's own edge for the relation asked
        chain = [first, *later]
        last = chain[-1].assertion
        terminal = _score(q, [_covered(q, _predicate_terms(chain[-1]))], _object_cover(q, last))
        if not terminal:
            continue
        predicates = [_covered(q, _predicate_terms(f)) for f in chain]
        names = _union(*(_object_cover(q, f.assertion) for f in chain))
        reading = Reading(Kind.path, path.edges, _score(q, predicates, names), len(path.edges))
        out.append((reading, terminal))
    return out


def _object_cover(q: _Question, a: Assertion) -> dict[str, float]:
    return _covered(q, set(terms(a.object or "")))


def _predicate_terms(fact: Fact) -> set[str]:
    return set(terms(predicate_words(fact.assertion.predicate or "")))
