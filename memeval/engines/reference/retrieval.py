"""Answering a question from the fact store at one moment: rank, read, or abstain.

The pipeline:

1. Lexical candidates from the index (BM25 + trigram neighbours).
2. Each candidate is judged at the view's moment. A fact that no longer holds hands its
   relevance to what replaced it (its superseder, the winner of its conflict, the current value
   of its slot), so a question worded like an old statement still finds the new value. A fact
   that nothing replaces (retracted, a retraction, valid only later, or below the confidence
   floor) becomes a *shadow*: it cannot answer, but it shows what the question was about.
3. A structured reading over the entity graph (forward, reverse, multi-hop) answers instead
   when it explains the question at least about as well as the best single fact.
4. Abstain when the best answer is weak: it covers under `MIN_COVERAGE` of the question's idf
   weight; or a shadow covers the question clearly better (`SHADOW_MARGIN`), meaning the
   question asks about something withdrawn, uncertain or not yet true; or the question names
   an entity and none of its other words match; or the answer is in a conflict that trust,
   recency and confidence cannot settle.
"""

from __future__ import annotations

from dataclasses import dataclass

from memeval.engines.reference.facts import Conflict, FactStore, Status, View
from memeval.engines.reference.graph import Graph
from memeval.engines.reference.index import ResolvedQuery, coverage, credit
from memeval.engines.reference.interpret import Kind, Reading, attributes, read
from memeval.engines.reference.provenance import fact_hit, joined_hit
from memeval.engines.reference.text import normalise, terms
from memeval.engines.types import ConflictReport, Hit, QueryResult

CANDIDATES = 40
WEAK_CONFIDENCE = 0.5  # below this a fact may be shown as context but never answers
MIN_COVERAGE = 0.4
SHADOW_MARGIN = 0.15
READING_SLACK = 0.1  # a structured reading may cover a little less than the best single fact
COVERAGE_WEIGHT = 0.6  # of the ranking score; the rest is BM25 normalised to the best hit


@dataclass
class _Candidate:
    fid: str
    bm25: float
    coverage: float

    def absorb(self, bm25: float, cov: float) -> None:
        self.bm25 = max(self.bm25, bm25)
        self.coverage = max(self.coverage, cov)


class Retriever:
    def __init__(self, store: FactStore, graph: Graph, view: View) -> None:
        self.store = store
        self.graph = graph
        self.view = view

    def usable(self, fid: str) -> bool:
        fact = self.store.facts.get(fid)
        return (
            fact is not None
            and self.view.status(fid) is Status.current
            and fact.assertion.confidence >= WEAK_CONFIDENCE
        )

    def answer(self, question: str, k: int) -> QueryResult:
        query = self.store.index.resolve(terms(question))
        if not query.terms:
            return QueryResult(abstained=True)
        pool, shadow = self._candidates(query)
        ranked = self._rank(pool)
        best_coverage = ranked[0].coverage if ranked else 0.0
        reading = read(question, query, self.graph, self.store.facts, self.usable)
        if reading is not None:
            result = self._from_reading(query, reading, best_coverage, k)
            if result is not None:
                return result
        if not ranked:
            return QueryResult(abstained=True)
        top = ranked[0]
        related = self._conflicts([c.fid for c in ranked[:k]])
        if (
            top.coverage < MIN_COVERAGE
            or shadow >= top.coverage + SHADOW_MARGIN
            or self._misses_attributes(question, query, top.fid)
            or self.view.unresolved(top.fid)
        ):
            return QueryResult(abstained=True, conflicts=related)
        top_bm25 = max(c.bm25 for c in ranked) or 1.0
        scores = {c.fid: _score(c, top_bm25) for c in ranked}
        chosen = self._distinct([c.fid for c in ranked])[:k]
        hits = [fact_hit(self.view, fid, scores[fid]) for fid in chosen]
        top_fact = self.store.facts[top.fid].assertion
        return QueryResult(
            hits=hits,
            answer=top_fact.object or top_fact.text,
            conflicts=self._conflicts([h.assertion_id for h in hits if h.assertion_id]),
        )

    # ---- candidates ---------------------------------------------------------------------

    def _candidates(self, query: ResolvedQuery) -> tuple[dict[str, _Candidate], float]:
        pool: dict[str, _Candidate] = {}
        shadow = 0.0
        for doc, bm25 in self.store.index.search(query, CANDIDATES):
            fact = self.store.fact_for_doc(doc)
            if fact is None:
                continue  # an older version of a re-stored id
            cov = coverage(query, fact.terms)
            status = self.view.status(fact.id)
            if status is Status.unrecorded:
                continue
            heirs = [fact.id] if self.usable(fact.id) else []
            if not heirs and status.replaceable:
                heirs = [s for s in self.view.successors(fact.id) if self.usable(s)]
            if not heirs:
                shadow = max(shadow, cov)
            for fid in heirs:
                if fid in pool:
                    pool[fid].absorb(bm25, cov)
                else:
                    own = coverage(query, self.store.facts[fid].terms)
                    pool[fid] = _Candidate(fid, bm25, max(cov, own))
        return pool, shadow

    def _rank(self, pool: dict[str, _Candidate]) -> list[_Candidate]:
        """Best first; equal scores put the newer fact first."""
        if not pool:
            return []
        top = max(c.bm25 for c in pool.values()) or 1.0
        facts = self.store.facts
        return sorted(
            pool.values(),
            key=lambda c: (round(_score(c, top), 6), facts[c.fid].newness),
            reverse=True,
        )

    def _distinct(self, fids: list[str]) -> list[str]:
        """One fact per statement: restatements by other sources already sit in `sources`."""
        out: list[str] = []
        seen: set[object] = set()
        for fid in fids:
            fact = self.store.facts[fid]
            keys = {fact.triple, normalise(fact.assertion.text)} - {None}
            if not keys & seen:
                out.append(fid)
            seen |= keys
        return out

    def _misses_attributes(self, question: str, query: ResolvedQuery, fid: str) -> bool:
        """A question naming an entity asks something about it; no match on that is a miss."""
        mentions = [m for m in self.graph.mentions(question) if m.full]
        if not mentions:
            return False
        wanted = attributes(question, mentions)
        present = self.store.facts[fid].terms
        asked = [qt for qt in query.terms if qt.term in wanted and qt.weight > 0]
        return bool(asked) and not any(credit(qt, present) for qt in asked)

    # ---- structured readings ------------------------------------------------------------

    def _from_reading(
        self, query: ResolvedQuery, reading: Reading, best_coverage: float, k: int
    ) -> QueryResult | None:
        view = self.view
        fids = list(reading.facts)
        if reading.kind is Kind.forward:
            tied = [fid for fid in fids if view.unresolved(fid)]
            if tied:
                return QueryResult(abstained=True, conflicts=self._conflicts(tied))
        else:
            if any(view.unresolved(fid) for fid in fids) and reading.kind is Kind.path:
                return None
            fids = [fid for fid in fids if not view.unresolved(fid)]
            if not fids:
                return None
        present: set[str] = set()
        for fid in fids:
            present |= self.store.facts[fid].terms
        cov = coverage(query, present)
        if cov < best_coverage - READING_SLACK:
            return None
        facts = [self.store.facts[fid] for fid in self._distinct(fids)]
        hits: list[Hit]
        if reading.kind is Kind.forward:
            facts.sort(key=lambda f: (f.resolution_key, f.seq), reverse=True)
            hits = [fact_hit(view, f.id, cov) for f in facts]
            answer = _join([f.assertion.object or "" for f in facts])
        elif reading.kind is Kind.reverse:
            hits = [fact_hit(view, f.id, cov) for f in facts]
            if len(facts) > 1:
                hits.insert(0, joined_hit(view, fids, cov))
            answer = _join([f.assertion.subject or "" for f in facts])
        else:
            hits = [joined_hit(view, fids, cov), *(fact_hit(view, fid, cov) for fid in fids)]
            answer = facts[-1].assertion.object or facts[-1].assertion.text
        return QueryResult(
            hits=hits[:k], answer=answer, conflicts=self._conflicts(list(reading.facts))
        )

    def _conflicts(self, fids: list[str]) -> list[ConflictReport]:
        seen: dict[tuple[str, ...], Conflict] = {}
        for fid in fids:
            for conflict in self.view.conflicts_of(fid):
                seen.setdefault(conflict.ids, conflict)
        return [
            ConflictReport(ids=list(c.ids), resolved_to=c.resolved_to, reason=c.reason)
            for c in seen.values()
        ]


def _score(c: _Candidate, top_bm25: float) -> float:
    return COVERAGE_WEIGHT * c.coverage + (1 - COVERAGE_WEIGHT) * c.bm25 / top_bm25


def _join(values: list[str]) -> str:
    unique = list(dict.fromkeys(v.strip() for v in values if v.strip()))
    return ", ".join(unique)
