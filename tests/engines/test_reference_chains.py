"""Readings that need more than word overlap: repeated relations, detours past a direct edge,
active questions over passive records, chains written in prose."""

from __future__ import annotations

from tests.engines.helpers import ask, fact, first_text, loaded, said

LADDER = [
    fact("m1", "Rhea Lund reports to Omar Haddad.", spo=("Rhea Lund", "reports_to", "Omar Haddad")),
    fact("m2", "Omar Haddad reports to Ines Roy.", spo=("Omar Haddad", "reports_to", "Ines Roy")),
    fact("m3", "Ines Roy reports to Paul Grey.", spo=("Ines Roy", "reports_to", "Paul Grey")),
]


def test_a_relation_asked_twice_takes_two_edges():
    engine = loaded(*LADDER)
    assert ask(engine, "Who is the manager of Rhea Lund's manager?").answer == "Ines Roy"
    assert ask(engine, "Who is Rhea Lund's boss?").answer == "Omar Haddad"


def test_a_direct_edge_beats_a_detour_to_the_same_relation():
    engine = loaded(
        fact("x1", "Juniper runs in eu-west-1.", spo=("Juniper app", "hosted_in", "eu-west-1")),
        fact("x2", "Juniper uses Maple.", spo=("Juniper app", "depends_on", "Maple service")),
        fact("x3", "Maple runs in us-east-2.", spo=("Maple service", "hosted_in", "us-east-2")),
    )
    assert said(ask(engine, "Where is the Juniper app hosted?"), "eu-west-1")
    asked = ask(engine, "Which region hosts the service the Juniper app depends on?")
    assert said(asked, "us-east-2")


def test_an_active_question_over_passive_records_lists_every_value():
    engine = loaded(
        fact(
            "r1", "The blue van is owned by Sam Okoro.", spo=("blue van", "owned_by", "Sam Okoro")
        ),
        fact("r2", "The trailer is owned by Sam Okoro.", spo=("trailer", "owned_by", "Sam Okoro")),
        fact("r3", "The red car is owned by Lena Fox.", spo=("red car", "owned_by", "Lena Fox")),
    )
    result = ask(engine, "What does Sam Okoro own?")
    assert result.answer is not None
    assert "blue van" in result.answer and "trailer" in result.answer
    assert "red car" not in result.answer
    assert ask(engine, "Who owns the red car?").answer == "Lena Fox"


def test_a_chain_written_in_prose_is_joined_through_a_shared_name():
    engine = loaded(
        fact("p1", "The Harlan clinic sends its blood samples to the Vireo laboratory."),
        fact("p2", "The Vireo laboratory is run by Dr Ama Boateng."),
        fact("p3", "The Corwin laboratory is run by Dr Felix Roth."),
    )
    result = ask(engine, "Who runs the lab that tests the Harlan clinic's blood samples?")
    assert said(result, "Ama Boateng") and "Felix Roth" not in first_text(result)


def test_a_sibling_of_the_same_kind_is_no_second_hop():
    engine = loaded(
        fact("f1", "Correction: the Morvan route leaves Brest at 06:55.", supersedes="f0"),
        fact("f0", "The Morvan ferry leaves Brest at 07:10."),
        fact("f2", "The Ouessant ferry leaves Brest at 07:25."),
    )
    result = ask(engine, "When does the Morvan ferry set off?")
    assert said(result, "06:55") and "07:25" not in first_text(result)
