"""Hybrid lexical ranking: BM25 over stemmed terms, trigram neighbours, newer first on ties."""

from __future__ import annotations

from memeval.engines.reference.index import LexicalIndex
from memeval.engines.reference.text import stem, terms, tokens
from tests.engines.helpers import ask, day, fact, first_text, loaded


def test_tokens_split_punctuation_and_lowercase():
    assert tokens("Dock-7 holds 40 CRATES.") == ["dock", "7", "holds", "40", "crates"]


def test_stemming_joins_inflections_but_keeps_numbers():
    assert stem("berths") == stem("berth")
    assert stem("rotated") == stem("rotation") == stem("rotates")
    assert stem("managed") == stem("manager")
    assert stem("2024") == "2024"
    assert stem("status") == "status"


def test_stopwords_and_question_words_are_not_terms():
    assert terms("What is the tide at the harbour?") == [stem("tide"), stem("harbour")]


def test_rare_shared_words_outrank_common_ones():
    engine = loaded(
        fact("c1", "The ferry to Skerry Island leaves from pier four."),
        fact("c2", "The ferry timetable changes in winter."),
        fact("c3", "The ferry cafe sells tea."),
    )
    assert "Skerry" in first_text(ask(engine, "Which pier serves the Skerry ferry?"))


def test_morphology_matches_through_stemming():
    engine = loaded(
        fact("g1", "Glasshouse vents are inspected every Thursday."),
        fact("g2", "The orchid collection sits in glasshouse two."),
    )
    assert "Thursday" in first_text(ask(engine, "When do vent inspections happen?"))


def test_trigram_neighbours_match_what_stemming_misses():
    index = LexicalIndex()
    index.add(1, terms("The kiln dependency list is pinned."))
    index.add(2, terms("The glaze recipe uses feldspar."))
    query = index.resolve(terms("What does the kiln depend on?"))
    # "depend" is not in the vocabulary, but "dependency" extends it
    depend_term = next(qt for qt in query.terms if qt.term == "depend")
    assert any(term == stem("dependency") for term, _ in depend_term.matches)
    assert index.search(query, 2)[0][0] == 1


def test_trigram_neighbours_do_not_join_unrelated_words():
    index = LexicalIndex()
    index.add(1, terms("Pallet count is twelve."))
    assert index.similar("country") == []


def test_new_vocabulary_updates_cached_neighbours():
    index = LexicalIndex()
    index.add(1, terms("Nothing relevant here."))
    assert index.similar("calibrat") == []
    index.add(2, terms("The calibrator finished."))
    assert [t for t, _ in index.similar("calibrat")] == ["calibrator"]


def test_equal_scores_put_the_newer_fact_first():
    engine = loaded(
        fact("o1", "The lighthouse lamp is serviced by Ewan.", recorded_at=day(1)),
        fact("o2", "The lighthouse lamp is serviced by Mairi.", recorded_at=day(5)),
    )
    result = ask(engine, "Who services the lighthouse lamp?")
    assert result.hits[0].assertion_id == "o2"


def test_equal_scores_without_times_follow_store_order():
    engine = loaded(
        fact("s1", "Quay crane north lifts forty tonnes."),
        fact("s2", "Quay crane south lifts forty tonnes."),
    )
    assert ask(engine, "Which quay crane lifts forty tonnes?").hits[0].assertion_id == "s2"


def test_k_limits_hits():
    engine = loaded(*(fact(f"b{i}", f"Beehive {i} produced honey this spring.") for i in range(9)))
    assert len(ask(engine, "Which beehive produced honey?", k=3).hits) == 3


def test_large_index_query_uses_rare_terms_first():
    index = LexicalIndex()
    for doc in range(400):
        index.add(doc, terms(f"routine harbour log entry number {doc}"))
    index.add(999, terms("harbour log entry about the missing buoy"))
    query = index.resolve(terms("missing buoy harbour log"))
    assert index.search(query, 5)[0][0] == 999


def test_non_ascii_words_are_whole_terms():
    assert tokens("Büro in Zürich, café_crème") == ["büro", "in", "zürich", "café", "crème"]
    engine = loaded(fact("u1", "The Zürich depot stores the crème brûlée moulds."))
    assert "Zürich" in first_text(ask(engine, "What does the Zürich depot store?"))
