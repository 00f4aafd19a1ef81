"""Hybrid lexical ranking: BM25 over terms, widened by character-trigram neighbours and by
related words.

BM25 rewards the rare words a query shares with a text. Stemming catches regular inflections,
but not every variant ("dependency"/"depends", a typo, a compound written two ways), so each
query term also brings in the vocabulary terms whose trigram sets are close to its own, at a
discount. Trigrams are indexed over the *vocabulary*, not over documents, so fuzzy matching
costs a few set look-ups per query term instead of a scan of every stored item. The lexicon's
related words (see `text.related`) come in the same way, also at a discount.

A query term that only frames the question in time ("today", "in spring 2023") weighs little,
and a phrase term (see `text.terms`) only counts when something stored matches it; its words
that match nothing on their own are then explained by it and dropped.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from dataclasses import dataclass, field

from memeval.engines.reference.text import PHRASE_JOIN, dice, framing, is_phrase, related, trigrams

K1 = 1.2
B = 0.75
FUZZY_MIN = 0.5  # Dice similarity for a stand-in that extends the query term (or vice versa)
MIN_PREFIX = 6  # ... by at least this many letters of shared prefix
FUZZY_MIN_OTHER = 0.75  # ... and for one that does not: "count" must not stand in for "country"
FUZZY_DISCOUNT = 0.8  # a near miss is never worth as much as the word itself
FUZZY_MAX_ALTERNATIVES = 3
FUZZY_MIN_LENGTH = 4  # short terms have too few trigrams for similarity to mean anything
COMMON_GRAM = 400  # a gram shared by more vocabulary terms than this proposes none of them
COMMON_TERM_SHARE = 0.1  # terms in more than this share of docs only rescore candidates
FRAMING_WEIGHT = 0.25  # of a time-framing term's usual weight
_CACHE_SIZE = 512


@dataclass(frozen=True)
class QueryTerm:
    """One distinct query term, how much it matters, and the index terms that count for it."""

    term: str
    weight: float
    matches: tuple[tuple[str, float], ...]  # (index term, credit in 0..1)


@dataclass(frozen=True)
class ResolvedQuery:
    terms: tuple[QueryTerm, ...]

    @property
    def total_weight(self) -> float:
        return sum(t.weight for t in self.terms)


@dataclass
class LexicalIndex:
    _postings: dict[str, dict[int, int]] = field(default_factory=dict)
    _lengths: dict[int, int] = field(default_factory=dict)
    _total_length: int = 0
    _grams: dict[str, set[str]] = field(default_factory=dict)
    _similar: dict[str, list[tuple[str, float]]] = field(default_factory=dict)

    def add(self, doc: int, terms: list[str]) -> None:
        for term, tf in Counter(terms).items():
            postings = self._postings.get(term)
            if postings is None:
                postings = self._postings[term] = {}
                self._new_vocabulary_term(term)
            postings[doc] = tf
        self._lengths[doc] = len(terms)
        self._total_length += len(terms)

    def remove(self, doc: int, terms: frozenset[str]) -> None:
        """Take a document out of the statistics (document count, lengths, document
        frequencies), so what replaces it ranks as if it had never been there. Its terms stay
        in the vocabulary, which only ever grows."""
        length = self._lengths.pop(doc, None)
        if length is None:
            return
        self._total_length -= length
        for term in terms:
            self._postings[term].pop(doc, None)

    def df(self, term: str) -> int:
        postings = self._postings.get(term)
        return len(postings) if postings else 0

    def idf(self, term: str) -> float:
        """BM25's idf; a term never seen gets the highest value, so it counts fully as missing."""
        n = len(self._lengths)
        df = self.df(term)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def weight(self, term: str) -> float:
        """How much a query term matters for coverage: idf without BM25's collapse to zero.

        A word every stored text shares still names the topic (ln 2 at least); a word no text
        holds weighs most, so a question about something never stored covers little.
        """
        return math.log(1 + (len(self._lengths) + 1) / (self.df(term) + 0.5))

    def resolve(self, query_terms: list[str]) -> ResolvedQuery:
        out: list[QueryTerm] = []
        for term in dict.fromkeys(query_terms):
            found: dict[str, float] = {}
            if term in self._postings:
                found[term] = 1.0
            for alt, sim in self.similar(term):
                found[alt] = max(found.get(alt, 0.0), sim * FUZZY_DISCOUNT)
            for alt, value in related(term).items():
                if alt in self._postings and value > found.get(alt, 0.0):
                    found[alt] = value
            weight = self.weight(term) * (FRAMING_WEIGHT if framing(term) else 1.0)
            out.append(QueryTerm(term, weight, tuple(found.items())))
        explained = {
            part for qt in out if is_phrase(qt.term) and qt.matches for part in _parts(qt.term)
        }
        kept = [qt for qt in out if qt.matches or not (is_phrase(qt.term) or qt.term in explained)]
        return ResolvedQuery(tuple(kept))

    def similar(self, term: str) -> list[tuple[str, float]]:
        """Vocabulary terms that look like `term`, best first; cached and kept current on add."""
        if not _fuzzy(term):
            return []
        cached = self._similar.get(term)
        if cached is not None:
            return cached
        grams = trigrams(term)
        shared: Counter[str] = Counter()
        for gram in grams:
            holders = self._grams.get(gram)
            if holders and len(holders) <= COMMON_GRAM:
                shared.update(holders)
        need = min(2, len(grams))  # one shared gram is chance; morphology shares several
        scored = []
        for candidate, count in shared.items():
            if count < need or candidate == term or not _comparable(term, candidate):
                continue
            sim = dice(grams, trigrams(candidate))
            if sim >= _threshold(term, candidate):
                scored.append((candidate, sim))
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        result = scored[:FUZZY_MAX_ALTERNATIVES]
        if len(self._similar) >= _CACHE_SIZE:
            self._similar.pop(next(iter(self._similar)))
        self._similar[term] = result
        return result

    def _new_vocabulary_term(self, term: str) -> None:
        if not _fuzzy(term):
            return
        grams = trigrams(term)
        for gram in grams:
            self._grams.setdefault(gram, set()).add(term)
        for cached_term, alternatives in self._similar.items():
            if cached_term == term or not _comparable(term, cached_term):
                continue
            sim = dice(grams, trigrams(cached_term))
            if sim >= _threshold(term, cached_term):
                alternatives.append((term, sim))
                alternatives.sort(key=lambda pair: (-pair[1], pair[0]))
                del alternatives[FUZZY_MAX_ALTERNATIVES:]

    def search(self, query: ResolvedQuery, limit: int) -> list[tuple[int, float]]:
        """The `limit` best documents by BM25, best first.

        Rare terms are scored first over their full postings; a very common term then only
        adds to documents already found. That keeps a query cheap on a large index, and costs
        little: a document holding only the common term would score too low to lead anyway.
        """
        n = len(self._lengths)
        if not n:
            return []
        average = self._total_length / n
        lengths = self._lengths
        weighted = [
            (index_term, credit, self.idf(index_term))
            for qt in query.terms
            for index_term, credit in qt.matches
        ]
        weighted.sort(key=lambda item: self.df(item[0]))
        scores: dict[int, float] = {}
        common = max(COMMON_TERM_SHARE * n, 64)
        for index_term, credit, idf in weighted:
            postings = self._postings[index_term]
            boost = credit * idf * (K1 + 1)
            if len(postings) > common and len(scores) >= limit:
                for doc in scores:
                    tf = postings.get(doc)
                    if tf:
                        scores[doc] += boost * tf / (tf + K1 * (1 - B + B * lengths[doc] / average))
                continue
            for doc, tf in postings.items():
                gain = boost * tf / (tf + K1 * (1 - B + B * lengths[doc] / average))
                scores[doc] = scores.get(doc, 0.0) + gain
        return heapq.nlargest(limit, scores.items(), key=lambda pair: (pair[1], pair[0]))


def _fuzzy(term: str) -> bool:
    """Words only: a number, a code or a phrase term is matched as written or not at all."""
    return len(term) >= FUZZY_MIN_LENGTH and not is_phrase(term) and term.isalpha()


def _parts(phrase: str) -> list[str]:
    return phrase.split(PHRASE_JOIN)


def _comparable(a: str, b: str) -> bool:
    """Terms of n letters have n trigrams, so lengths alone bound their Dice similarity."""
    return 2 * min(len(a), len(b)) >= FUZZY_MIN * (len(a) + len(b))


def _threshold(a: str, b: str) -> float:
    """Morphology extends a word ("depend" -> "dependency"); other near misses need more.

    A short stem is a prefix of too many unrelated words ("count" of "country") to count.
    """
    short, long = sorted((a, b), key=len)
    extends = len(short) >= MIN_PREFIX and long.startswith(short)
    return FUZZY_MIN if extends else FUZZY_MIN_OTHER


def coverage(query: ResolvedQuery, present: frozenset[str] | set[str]) -> float:
    """Share of the query's weight (idf) that a text's terms cover, fuzzy matches partly.

    This is the abstention signal: unlike a BM25 score it is comparable across queries, and a
    question whose rare words no stored text holds scores low however common its other words.
    """
    total = query.total_weight
    if total <= 0:
        return 0.0
    return sum(qt.weight * credit(qt, present) for qt in query.terms) / total


def credit(qt: QueryTerm, present: frozenset[str] | set[str]) -> float:
    best = 0.0
    for term, value in qt.matches:
        if value > best and term in present:
            best = value
    return best
