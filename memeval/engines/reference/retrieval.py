"""Answering a question from the fact store at one moment: rank, read, or abstain.

The pipeline:

1. Lexical candidates from the index (BM25 + trigram neighbours + related words), ranked by
   coverage and BM25, and a little by the question's word pairs they hold in a row when those
   words also occur apart (see `_telling`).
2. Each candidate is judged at the view's moment. A fact that no longer holds hands its
   relevance to what replaced it (its superseder, the winner of its conflict, the current value
   of its slot), so a question worded like an old statement still finds the new value. A fact
   that nothing replaces (retracted, a retraction, valid only later, or below the confidence
   floor) becomes a *shadow*: it cannot answer, but it shows what the question was about.
   Among records with no triple, which no slot can order, a newer one worded as a change
   ("replaced its helpline with", "no longer", "from now on") on the same matched words goes
   before an older one, when it is at least `CHANGE_BAND` as relevant: text alone says it
   replaces what the older one states.
3. A structured reading over the entity graph (forward, reverse, multi-hop) answers instead
   when it explains the question at least about as well as the best single fact; failing
   that, a chain of up to three records joined by names they share, one of its first two with
   no triple (see `bridges`), when the best single one leaves most of the question
   unanswered. A reverse reading also lists the records with no triple that state its
   relation toward the entity (see `_stated_in_text`).
4. Abstain when the best answer is weak: it covers under `MIN_COVERAGE` of the question's idf
   weight; or a shadow covers the question clearly better than any current record
   (`SHADOW_MARGIN`), meaning the question asks about something withdrawn, uncertain or not
   yet true (a current record as close to its words, only ranked lower as the older of a
   change, says the question is about what holds now); or the question names
   an entity and none of its other words match; or it names nothing and the answer lacks one
   of its head nouns (see `topic`: "the staff creche" is not "the staff canteen"); or the
   answer is in a conflict that trust, recency and confidence cannot settle.

*Entity first*: the words that name something (see `names`) must all be in what answers, or
in what handed its relevance on to it; only the other words may match loosely. A question
about a name nothing stored carries is not about the nearest name that is stored. Among the
records that carry the name, the word saying what kind of thing it is ("office" after "Leeds")
weighs little in ranking: it tells them apart no better than the name does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from memeval.engines.reference.bridges import Bridge, bridge
from memeval.engines.reference.facts import Conflict, Fact, FactStore, Status, View
from memeval.engines.reference.graph import Graph
from memeval.engines.reference.index import QueryTerm, ResolvedQuery, coverage, credit
from memeval.engines.reference.interpret import Kind, Reading, attributes, read
from memeval.engines.reference.names import name_heads, name_terms
from memeval.engines.reference.provenance import fact_hit, joined_hit
from memeval.engines.reference.text import (
    bigrams,
    framing,
    is_phrase,
    normalise,
    placed_terms,
    predicate_words,
    related,
    terms,
    tokens,
)
from memeval.engines.types import ConflictReport, Hit, QueryResult

CANDIDATES = 40
WEAK_CONFIDENCE = 0.5  # below this a fact may be shown as context but never answers
MIN_COVERAGE = 0.4
SHADOW_MARGIN = 0.15
ATTRIBUTE_COVERAGE = 0.3  # of the weight of a question's words that are not names
READING_SLACK = 0.1  # a structured reading may cover a little less than the best single fact
CHANGE_BAND = 0.5  # of an older record's score that a newer one worded as a change needs
COVERAGE_WEIGHT = 0.6  # of the lexical score; the rest is BM25 normalised to the best hit
PHRASE_WEIGHT = 0.2  # of the ranking score; the rest is the lexical score
HEAD_WEIGHT = 0.25  # of the usual weight of the word naming the kind of a named entity
POSSESSIVE_REACH = 2  # words after "Omar's" that may still name his relation: "direct reports"
SAME_PREFIX = 5  # a shorter stem beginning a longer one is a chance more often than a family
_AUXILIARIES = frozenset("do does did".split())
_PREPOSITIONS = frozenset(
    "in on at during for of to from with near by after before under over into through".split()
)
_DETERMINERS = frozenset("the a an my your our their his her its this that these those".split())


@dataclass
class _Candidate:
    fid: str
    bm25: float
    coverage: float
    phrase: float  # share of the question's word pairs (by weight) it holds in a row
    via: set[str]  # the matched facts whose relevance it carries, itself included when matched

    def absorb(self, bm25: float, cov: float, phrase: float, matched: str) -> None:
        self.bm25 = max(self.bm25, bm25)
        self.coverage = max(self.coverage, cov)
        self.phrase = max(self.phrase, phrase)
        self.via.add(matched)


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
        names = name_terms(question)
        ranking = _for_ranking(query, name_heads(question, names))
        pool, shadow = self._candidates(ranking, names, _pairs(question, ranking))
        ranked = self._rank(pool, ranking)
        best_coverage = ranked[0].coverage if ranked else 0.0
        order = [c.fid for c in ranked]
        reading = read(question, query, self.graph, self.store.facts, self.usable)
        if reading is not None:
            stated = self._stated_in_text(reading, query, order)
            result = self._from_reading(query, reading, best_coverage, k, names, stated)
            if result is not None:
                return result
        chain = bridge(question, self.store, self.usable, query, names, order)
        if chain is not None:
            return self._from_bridge(chain, k)
        if not ranked:
            return QueryResult(abstained=True)
        top = ranked[0]
        related = self._conflicts([c.fid for c in ranked[:k]])
        if (
            top.coverage < MIN_COVERAGE
            or shadow >= max(c.coverage for c in ranked) + SHADOW_MARGIN
            or self._misses_attributes(question, query, names, top)
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

    def _candidates(
        self, query: ResolvedQuery, names: frozenset[str], pairs: dict[tuple[str, str], float]
    ) -> tuple[dict[str, _Candidate], float]:
        found: list[tuple[Fact, float]] = []
        for doc, bm25 in self.store.index.search(query, CANDIDATES):
            fact = self.store.fact_for_doc(doc)
            if fact is None:
                continue  # an older version of a re-stored id
            if not names <= fact.terms:
                continue  # about something else of a similar kind
            found.append((fact, bm25))
        pairs = _telling(pairs, [fact for fact, _ in found])
        pool: dict[str, _Candidate] = {}
        shadow = 0.0
        for fact, bm25 in found:
            cov = coverage(query, fact.terms)
            phrase = _held(pairs, fact.pairs)
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
                    pool[fid].absorb(bm25, cov, phrase, fact.id)
                else:
                    heir = self.store.facts[fid]
                    own = coverage(query, heir.terms), _held(pairs, heir.pairs)
                    pool[fid] = _Candidate(
                        fid, bm25, max(cov, own[0]), max(phrase, own[1]), {fact.id}
                    )
        return pool, shadow

    def _rank(self, pool: dict[str, _Candidate], query: ResolvedQuery) -> list[_Candidate]:
        """Best first; equal scores put the newer fact first; then changes before what they
        replace (see the module doc)."""
        if not pool:
            return []
        top = max(c.bm25 for c in pool.values()) or 1.0
        facts = self.store.facts
        scores = {c.fid: round(_score(c, top), 6) for c in pool.values()}
        plain = [c for c in pool.values() if facts[c.fid].slot is None]
        matched = {
            c.fid: {qt.term for qt in query.terms if credit(qt, facts[c.fid].terms)} for c in plain
        }
        plain.sort(key=lambda c: facts[c.fid].newness, reverse=True)
        for n, older in enumerate(plain):
            for newer in plain[:n]:
                if (
                    facts[newer.fid].change
                    and facts[newer.fid].recency > facts[older.fid].recency
                    and matched[newer.fid] & matched[older.fid]
                    and scores[newer.fid] >= CHANGE_BAND * scores[older.fid]
                ):
                    scores[older.fid] = min(scores[older.fid], scores[newer.fid] - 1e-6)
        return sorted(
            pool.values(), key=lambda c: (scores[c.fid], facts[c.fid].newness), reverse=True
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

    def _misses_attributes(
        self, question: str, query: ResolvedQuery, names: frozenset[str], top: _Candidate
    ) -> bool:
        """A question naming an entity asks something about it; no match on that is a miss.

        The name matching is no evidence the answer is *about* what is asked: of the weight
        of the words that are neither names nor time framing, the answer must cover
        `ATTRIBUTE_COVERAGE`, and when
        the name is a graph entity, at least one of those words. What the answer stands in
        for counts too: the winner of a conflict answers a question worded like the rival it
        beat.
        """
        present = set(self.store.facts[top.fid].terms)
        for fid in top.via:
            present |= self.store.facts[fid].terms
        if not names and not _holds_topic(question, present):
            return True
        if names:
            rest = [qt for qt in query.terms if qt.term not in names and not framing(qt.term)]
            total = sum(qt.weight for qt in rest)
            held = sum(qt.weight * credit(qt, present) for qt in rest)
            if total > 0 and held < ATTRIBUTE_COVERAGE * total:
                return True
        mentions = [m for m in self.graph.mentions(question) if m.full]
        if not mentions:
            return False
        wanted = attributes(question, mentions)
        asked = [qt for qt in query.terms if qt.term in wanted and qt.weight > 0]
        return bool(asked) and not any(credit(qt, present) for qt in asked)

    # ---- structured readings ------------------------------------------------------------

    def _from_reading(
        self,
        query: ResolvedQuery,
        reading: Reading,
        best_coverage: float,
        k: int,
        names: frozenset[str],
        stated: list[str],
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
        if cov < best_coverage - READING_SLACK or not names <= present:
            return None
        facts = [self.store.facts[fid] for fid in self._distinct(fids)]
        hits: list[Hit]
        if reading.kind is Kind.forward:
            facts.sort(key=lambda f: (f.resolution_key, f.seq), reverse=True)
            hits = [fact_hit(view, f.id, cov) for f in facts]
            answer = _join([f.assertion.object or "" for f in facts])
        elif reading.kind is Kind.reverse:
            rows = [*(f.id for f in facts), *stated]
            hits = [fact_hit(view, fid, cov) for fid in rows]
            if len(rows) > 1:
                hits.insert(0, joined_hit(view, rows, cov))
            answer = _join([f.assertion.subject or "" for f in facts])
        else:
            hits = [joined_hit(view, fids, cov), *(fact_hit(view, fid, cov) for fid in fids)]
            answer = facts[-1].assertion.object or facts[-1].assertion.text
        return QueryResult(
            hits=hits[:k], answer=answer, conflicts=self._conflicts(list(reading.facts))
        )

    def _stated_in_text(
        self, reading: Reading, query: ResolvedQuery, ranked: list[str]
    ) -> list[str]:
        """Records with no triple that state a reverse reading's relation toward its entity.

        "Chloe Martin has been a direct report of Omar Haddad" is one more answer to "Who
        reports to Omar Haddad?" that no edge holds. Prose has no subject and object, but
        English puts the object after the verb, active or passive ("reports to Omar", "is
        maintained by Ayla"): a record qualifies when a word for the relation comes before
        the entity's name, or its own word right after it as a possessive ("Omar Haddad's
        direct reports include Chloe"; "Omar's manager", a related word, is the other way
        round); "Omar Haddad reports to Sofia Greco" is the other direction.
        """
        if reading.kind is not Kind.reverse:
            return []
        edge = self.store.facts[reading.facts[0]].assertion
        relation = set(terms(predicate_words(edge.predicate or "")))
        asked = [qt for qt in query.terms if credit(qt, relation)]
        entity = self.graph.node_of(edge.object or "")
        out: list[str] = []
        for fid in ranked:
            fact = self.store.facts[fid]
            if fact.triple is not None:
                continue
            text = fact.assertion.text
            said = [i for i, t in placed_terms(text) if _credited(asked, t)]
            named = [m for m in self.graph.mentions(text) if m.node == entity]
            if not said or not named:
                continue
            words = tokens(text)
            owned = {  # "Omar's (direct) reports": the relation's own word, toward him
                i
                for m in named
                if m.end < len(words) and words[m.end] == "s"
                for i in range(m.end + 1, m.end + 1 + POSSESSIVE_REACH)
            }
            as_written = {i for i, t in placed_terms(text) if t in relation}
            if min(said) < min(m.start for m in named) or owned & as_written:
                out.append(fid)
        return out

    def _from_bridge(self, chain: Bridge, k: int) -> QueryResult:
        fids = list(chain.records)
        hits = [
            joined_hit(self.view, fids, chain.coverage),
            *(fact_hit(self.view, fid, chain.coverage) for fid in reversed(fids)),
        ]
        last = self.store.facts[fids[-1]].assertion
        return QueryResult(
            hits=hits[:k], answer=last.object or last.text, conflicts=self._conflicts(fids)
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


def topic(question: str) -> list[str]:
    """The head noun of each phrase of the question: the last word of a run of content words
    written side by side that the lexicon does not know as a relation word ("creche" in "when
    does the staff creche open", "projector" in "the spare projector").

    The lexicon holds the words for relations, roles and schedules, which a record may say in
    other words; a word it does not know names the thing asked about, and English puts a
    phrase's head last, after its modifiers.
    """
    runs: list[list[tuple[int, str]]] = []
    for i, term in placed_terms(question):
        if is_phrase(term):
            continue
        if runs and runs[-1][-1][0] == i - 1:
            runs[-1].append((i, term))
        else:
            runs.append([(i, term)])
    words = tokens(question)
    out: list[str] = []
    for run in runs:
        before = _word_before(words, run[0][0])
        if before in _PREPOSITIONS:
            continue  # "during a fire alarm" says when, not what is asked about
        if len(run) > 1 and before in _AUXILIARIES:
            run = run[:-1]  # "does the staff creche open": the last word is the verb
        plain = [t for _, t in run if not framing(t) and not related(t)]
        if plain:
            out.append(plain[-1])
    return out


def _word_before(words: list[str], start: int) -> str | None:
    """The word before a phrase, past its determiners: "do"/"does"/"did" make the phrase a
    subject followed by its verb, a preposition makes it a circumstance of the question."""
    i = start - 1
    while i >= 0 and words[i] in _DETERMINERS:
        i -= 1
    return words[i] if i >= 0 else None


def _holds_topic(question: str, present: set[str]) -> bool:
    """A question with no name to anchor it is about its head nouns (see `topic`); a record
    sharing only its common words ("staff", "open") answers another question. The head must
    be there as written, by stem or through the lexicon: a look-alike spelling ("crew" for
    "creche") is another thing."""
    return all(
        any(_same_word(head, term) for term in present)
        or any(alt in present for alt in related(head))
        for head in topic(question)
    )


def _same_word(a: str, b: str) -> bool:
    """One stem, or two the light stemmer left apart though one begins the other
    ("assembl" of "assemble", "assemb" of "assembly")."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= SAME_PREFIX and long_.startswith(short)


def _credited(asked: list[QueryTerm], term: str) -> bool:
    return any(credit(qt, {term}) for qt in asked)


def _score(c: _Candidate, top_bm25: float) -> float:
    lexical = COVERAGE_WEIGHT * c.coverage + (1 - COVERAGE_WEIGHT) * c.bm25 / top_bm25
    return (1 - PHRASE_WEIGHT) * lexical + PHRASE_WEIGHT * c.phrase


def _for_ranking(query: ResolvedQuery, heads: frozenset[str]) -> ResolvedQuery:
    """The query for ranking records that all carry the question's names: the word naming the
    entity's kind ("office" after "Leeds") tells them apart no better than the name does, and
    a record that states the asked attribute without repeating it must not lose for that."""
    return ResolvedQuery(
        tuple(
            replace(qt, weight=qt.weight * HEAD_WEIGHT) if qt.term in heads else qt
            for qt in query.terms
        )
    )


def _pairs(question: str, query: ResolvedQuery) -> dict[tuple[str, str], float]:
    """The question's adjacent word pairs, each weighing what its two words weigh."""
    weight = {qt.term: qt.weight for qt in query.terms}
    return {pair: weight.get(pair[0], 0.0) + weight.get(pair[1], 0.0) for pair in bigrams(question)}


def _telling(
    pairs: dict[tuple[str, str], float], facts: list[Fact]
) -> dict[tuple[str, str], float]:
    """The pairs worth rewarding among these facts, reweighed by how often their words occur
    apart: a pair always written together ("data centre" in every record about the site) says
    nothing its words do not, while "usage effectiveness" among records that also say "power
    usage" picks out the one that means it."""
    out: dict[tuple[str, str], float] = {}
    for pair, weight in pairs.items():
        together = sum(pair in f.pairs for f in facts)
        apart = max(sum(pair[0] in f.terms for f in facts), sum(pair[1] in f.terms for f in facts))
        if together and apart > together:
            out[pair] = weight * (1 - together / apart)
    return out


def _held(pairs: dict[tuple[str, str], float], present: frozenset[tuple[str, str]]) -> float:
    total = sum(pairs.values())
    return sum(w for pair, w in pairs.items() if pair in present) / total if total > 0 else 0.0


def _join(values: list[str]) -> str:
    unique = list(dict.fromkeys(v.strip() for v in values if v.strip()))
    return ", ".join(unique)
