"""Wording: stem families, irregular forms, phrases, related words, time framing, names."""

from __future__ import annotations

from memeval.engines.reference.index import LexicalIndex
from memeval.engines.reference.names import name_heads, name_terms
from memeval.engines.reference.text import bigrams, framing, related, stem, terms
from tests.engines.helpers import abstained, ask, fact, loaded, said


def test_a_word_family_shares_one_stem():
    assert stem("deliver") == stem("delivering") == stem("deliveries") == stem("delivered")
    assert stem("waters") == stem("water")
    assert stem("supplies") == stem("supply") == stem("supplier")
    assert stem("weekly") == stem("week")


def test_irregular_forms_reach_their_base_word():
    assert stem("led") == stem("lead")
    assert stem("kept") == stem("keep")
    assert stem("sat") == stem("sit") == stem("sitting")


def test_a_known_phrase_is_also_one_term():
    found = terms("Call the out-of-hours line")
    assert "hour" in found and any("_" in t for t in found)
    # a pronoun may stand between a verb and its particle
    assert set(terms("who looks it up")) & set(terms("look up")) >= {stem("look")}


def test_related_words_are_symmetric():
    assert stem("boss") in related(stem("manager"))
    assert stem("manager") in related(stem("boss"))


def test_a_category_relates_its_head_to_members_but_not_members_to_each_other():
    assert stem("truck") in related(stem("vehicle"))
    assert stem("van") not in related(stem("truck"))


def test_time_framing_weighs_little_and_an_unmatched_phrase_is_dropped():
    index = LexicalIndex()
    index.add(1, terms("The Tamar ferry sails from pier 2."))
    query = index.resolve(terms("Where does the Tamar ferry sail from today?"))
    weights = {qt.term: qt.weight for qt in query.terms}
    assert framing("today") and weights["today"] < weights[stem("ferry")]
    assert not any("_" in qt.term and not qt.matches for qt in query.terms)


def test_bigrams_pair_only_words_written_side_by_side():
    assert (stem("usage"), stem("effectiveness")) in bigrams("power usage effectiveness")
    assert not bigrams("the centre's power") & {(stem("centre"), stem("power"))}


def test_names_are_capitalised_words_and_codes_not_titles_or_acronyms():
    assert name_terms("Who is the CEO of Vantor Labs?") == {stem("vantor"), stem("labs")}
    assert name_terms("Which gate does flight A320 use on Monday?") == {"a320"}
    assert name_terms("What did Dr Osei say in March?") == {stem("osei")}
    assert name_terms("Sam Okoro owns what?") == {stem("sam"), stem("okoro")}
    question = "What is the Leeds office's fax?"
    assert name_heads(question, name_terms(question)) == {stem("office")}


def test_a_question_about_a_name_nobody_stored_abstains():
    engine = loaded(
        fact("p1", "Marta Kowalska's extension is 4410.", spo=("Marta Kowalska", "ext", "4410")),
        fact("p2", "Marek Kowal's extension is 4522.", spo=("Marek Kowal", "ext", "4522")),
    )
    assert abstained(ask(engine, "What is Marta Kowal's extension?"))
    assert said(ask(engine, "What is Marta Kowalska's extension?"), "4410")


def test_an_attribute_stored_only_for_another_entity_is_not_given():
    engine = loaded(
        fact(
            "s1", "The Riverside depot has 12 loading bays.", spo=("Riverside depot", "bays", "12")
        ),
        fact("s2", "The Hilltop depot opened in 2019."),
    )
    result = ask(engine, "How many loading bays does the Hilltop depot have?")
    assert abstained(result) and "12" not in (result.answer or "")


def test_paraphrased_relations_still_answer():
    engine = loaded(
        fact(
            "c1", "Verdant Energy's chief executive is Hugo Lamb.", spo=("Verdant", "ceo", "Hugo")
        ),
        fact("c2", "The Alder room seats 24 people.", spo=("Alder room", "seats", "24")),
    )
    assert said(ask(engine, "Who is the boss at Verdant Energy?"), "Hugo")
    assert said(ask(engine, "What is the capacity of the Alder room?"), "24")
