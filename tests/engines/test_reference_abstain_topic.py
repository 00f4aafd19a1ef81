"""A question naming nothing is about its head nouns; invented facilities, people and towns."""

from __future__ import annotations

from memeval.engines.reference.bridges import asked_kind
from memeval.engines.reference.retrieval import topic
from memeval.engines.reference.text import stem
from tests.engines.helpers import abstained, ask, fact, loaded, said


def _facilities():
    return loaded(
        fact("f1", "The staff canteen opens at 7:30 on weekdays."),
        fact("f2", "The basement gym closes at 21:00 every evening."),
        fact("f3", "The spare projector is kept in the records cupboard."),
    )


def test_the_topic_is_the_head_of_each_phrase_not_its_verb_or_modifiers():
    assert topic("When does the staff creche open?") == [stem("creche")]
    assert topic("Where is the spare laminator kept?") == [stem("laminator")]
    # "inspections" is a word the lexicon relates ("check", "audit"): it says what is asked
    assert topic("When do vent inspections happen?") == [stem("vent")]


def test_a_question_about_a_thing_never_stored_abstains_despite_shared_words():
    engine = _facilities()
    assert abstained(ask(engine, "When does the staff creche open?"))
    assert abstained(ask(engine, "When does the rooftop sauna close?"))
    assert abstained(ask(engine, "Where do we keep the spare laminator?"))


def test_a_question_about_a_stored_thing_still_answers_in_other_words():
    engine = _facilities()
    assert said(ask(engine, "When does the gym in the basement close?"), "21:00")
    assert said(ask(engine, "Where is the projector stored?"), "records cupboard")


def test_the_kind_asked_for_is_the_noun_past_a_superlative():
    assert asked_kind("What is the nearest station to my aunt?") == stem("station")
    assert asked_kind("Which closest terminal serves my cousin?") == stem("terminal")
    assert asked_kind("Which team owns the boiler?") == stem("team")
    assert asked_kind("Which of my cousins lives in Dunmarsh?") is None


def test_a_superlative_question_naming_nothing_follows_the_chain():
    engine = loaded(
        fact("c1", "My aunt Wilhelmina settled in Kettlewick last year."),
        fact("c2", "The nearest railway station to Kettlewick is Harrowgate Junction."),
        fact("c3", "My cousin Bruno now lives in Dunmarsh."),
    )
    assert said(ask(engine, "What is the nearest station to my aunt?"), "Harrowgate Junction")


def test_a_paraphrase_of_who_holds_a_budget_is_found():
    engine = loaded(
        fact("b1", "Dmitri Volkov approves spending for the research lab."),
        fact("b2", "The research lab is on the third floor."),
    )
    assert said(ask(engine, "Who is the budget holder for the research lab?"), "Dmitri Volkov")


def test_a_reverse_look_up_reads_a_possessive_in_prose_but_not_its_opposite():
    edge = ("Ines Duarte", "reports_to", "Kofi Mensah")
    engine = loaded(
        fact("r1", "Ines Duarte reports to Kofi Mensah.", spo=edge),
        fact("r2", "Kofi Mensah's direct reports include Yusuf Demir."),
        fact("r3", "Kofi Mensah's manager is Halima Osei."),
    )
    result = ask(engine, "Who reports to Kofi Mensah?")
    shown = " ".join(h.text for h in result.hits)
    assert "Yusuf Demir" in shown
    assert "Halima Osei" not in shown


def test_a_phrase_after_a_preposition_is_a_circumstance_not_the_topic():
    assert topic("Where is the kayak stored during a flood drill?") == [stem("kayak")]


def test_a_stem_the_stemmer_left_apart_still_counts_as_the_same_word():
    engine = loaded(fact("m1", "The flood assembly point is the upper car park."))
    assert said(ask(engine, "Where do we assemble during a flood drill?"), "upper car park")
    assert abstained(ask(engine, "Where is the flood barrier stored?"))
