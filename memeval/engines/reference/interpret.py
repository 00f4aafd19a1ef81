"""Structured readings of a question over the entity graph.

A question that names a known entity may ask about one of its edges, in either direction, or
about something a few edges away. The heuristics, all generic:

- *Attribute words* are the question's content terms outside fully written entity names. A
  reading must cover some of them with the words of its last edge: the predicate's words
  ("reports_to" -> report) or the name at its far end ("Berlin office" covers "office").
- *Direction* of a one-edge reading follows word order: the entity written before the predicate
  phrase is its subject ("Who does Ana report to?" -> forward), after it is its object ("Who
  reports to Ana?" -> reverse). "by" right before the entity flips this for an active
  predicate ("Who is managed by Ana?" -> Ana is the subject of "manages"), but not for a
  predicate that is itself passive ("Who is mentored by Ana?" over `mentored_by` -> reverse).
  A reading matched only through the far-end name
  is forward: a name describes the thing reached.
- *Multi-hop* readings walk forward edges up to three deep, each node expanded once (so cycles
  end) and a bounded number of edges looked at (so hubs stay cheap), and keep the path whose
  edges cover the most attribute weight; its last edge must cover something, and on a tie the
  shorter path wins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from memeval.engines.reference.facts import Fact
from memeval.engines.reference.graph import Graph, Mention
from memeval.engines.reference.index import ResolvedQuery, credit
from memeval.engines.reference.text import STOPWORDS, predicate_words, stem, terms, tokens

MAX_HOPS = 3


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
    resolved: ResolvedQuery
    passive_before: set[int]  # token positions right after "by"


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
    words = tokens(question)
    inside = {i for m in mentions if m.full for i in range(m.start, m.end)}
    out: dict[str, list[int]] = {}
    for i, word in enumerate(words):
        if i not in inside and word not in STOPWORDS:
            out.setdefault(stem(word), []).append(i)
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
    passive = {i + 1 for i, word in enumerate(words) if word == "by"}
    return _Question(mentions, attributes_, weights, query, passive)


def _covered(q: _Question, present: set[str]) -> set[str]:
    return {qt.term for qt in q.resolved.terms if qt.term in q.weights and credit(qt, present)}


def _share(q: _Question, covered: set[str]) -> float:
    return sum(q.weights[t] for t in covered) / sum(q.weights.values())


def _one_edge(
    q: _Question,
    mention: Mention,
    graph: Graph,
    facts: dict[str, Fact],
    usable: Callable[[str], bool],
) -> list[tuple[Reading, float]]:
    out: list[tuple[Reading, float]] = []
    for kind, edges in ((Kind.forward, graph.out_edges), (Kind.reverse, graph.in_edges)):
        groups: dict[str, list[Fact]] = {}
        for fid in edges.get(mention.node, ()):
            fact = facts.get(fid)
            if fact is not None and fact.assertion.predicate and usable(fid):
                groups.setdefault(fact.slot[1] if fact.slot else "", []).append(fact)
        for predicate, group in groups.items():
            by_predicate = _covered(q, set(terms(predicate_words(predicate))))
            far = set()
            if kind is Kind.forward:
                for fact in group:
                    far.update(terms(fact.assertion.object or ""))
            by_name = _covered(q, far)
            if not by_predicate and not by_name:
                continue
            passive = "by" in tokens(predicate_words(predicate))
            if by_predicate and kind is not _direction(q, mention, by_predicate, passive):
                continue
            if not by_predicate and kind is Kind.reverse:
                continue
            covered = by_predicate | by_name
            ids = tuple(f.id for f in group)
            out.append((Reading(kind, ids, _share(q, covered), 1), _share(q, covered)))
    return out


def _direction(
    q: _Question, mention: Mention, predicate_terms: set[str], passive_predicate: bool
) -> Kind:
    first = min(min(q.attributes[t]) for t in predicate_terms)
    entity_first = mention.start < first
    if mention.start in q.passive_before and not passive_predicate:
        entity_first = not entity_first
    return Kind.forward if entity_first else Kind.reverse


def _paths(
    q: _Question,
    mention: Mention,
    graph: Graph,
    facts: dict[str, Fact],
    usable: Callable[[str], bool],
) -> list[tuple[Reading, float]]:
    out: list[tuple[Reading, float]] = []
    for path in graph.walk(mention.node, MAX_HOPS, usable, facts):
        if len(path.edges) < 2:
            continue  # one edge is a direct reading, weighed with its direction above
        *middle, last = (facts[fid].assertion for fid in path.edges)
        terminal = _covered(q, set(terms(f"{predicate_words(last.predicate or '')} {last.object}")))
        if not terminal:
            continue
        on_the_way: set[str] = set()
        for a in middle:
            on_the_way.update(terms(f"{predicate_words(a.predicate or '')} {a.object}"))
        covered = terminal | _covered(q, on_the_way)
        reading = Reading(Kind.path, path.edges, _share(q, covered), len(path.edges))
        out.append((reading, _share(q, terminal)))
    return out
