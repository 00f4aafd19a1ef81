"""Chains of two and three records mixing prose and triples, look-alike identifiers that must
not join, reverse look-ups with a row stated only in prose, and repeated relations."""

from __future__ import annotations

from memeval.engines.reference.names import name_terms
from memeval.suites.fixture import Assertion
from tests.engines.helpers import ask, fact, loaded, said

ORDERS = [
    fact("o1", "Parcel order PO-33120 was assigned to the Venlo fulfilment centre."),
    fact("o2", "The Venlo fulfilment centre is part of the Benelux region."),
    fact("o3", "Customs clearance for all Benelux region imports is done by Maasbroker BV."),
    fact("d1", "Parcel order PO-33102 was assigned to the Brno fulfilment centre."),
    fact("d2", "The Brno fulfilment centre is part of the Danube region."),
    fact("d3", "Customs clearance for all Danube region imports is done by Vltava Clearing."),
]


def reports(fid: str, who: str, to: str) -> Assertion:
    return fact(fid, f"{who} reports to {to}.", spo=(who, "reports_to", to))


def test_the_number_of_an_identifier_is_a_name_but_a_year_or_count_is_not():
    assert name_terms("Which broker clears order ORD-5817?") == {"5817"}
    assert name_terms("Where is container TGHU 8812045?") == {"8812045"}
    assert "7" in name_terms("Who holds the budget for pilot Heron-7?")
    assert not name_terms("The team had 40 people over the 2024-2025 season.")


def test_three_prose_records_chain_through_the_names_they_share():
    engine = loaded(*ORDERS)
    first = ask(engine, "Which customs broker handles parcel order PO-33120?")
    assert said(first, "Maasbroker") and not said(first, "Vltava")
    other = ask(engine, "Which customs broker handles parcel order PO-33102?")
    assert said(other, "Vltava") and not said(other, "Maasbroker")


def test_a_prose_link_leads_into_triples():
    engine = loaded(
        fact("o1", "Order ORD-5817 is being picked at the Tilbury fulfilment centre."),
        fact(
            "o2",
            "The Tilbury fulfilment centre belongs to the North Sea region.",
            spo=("Tilbury fulfilment centre", "region", "North Sea region"),
        ),
        fact(
            "o3",
            "Customs paperwork for the North Sea region is handled by Haldane Brokers.",
            spo=("North Sea region", "customs_broker", "Haldane Brokers"),
        ),
        fact("d1", "Order ORD-5871 is being picked at the Mersin fulfilment centre."),
        fact(
            "d2",
            "The Mersin fulfilment centre belongs to the Levant region.",
            spo=("Mersin fulfilment centre", "region", "Levant region"),
        ),
        fact(
            "d3",
            "Customs paperwork for the Levant region is handled by Ozan Customs.",
            spo=("Levant region", "customs_broker", "Ozan Customs"),
        ),
    )
    broker = ask(engine, "Which customs broker will clear order ORD-5817?")
    assert said(broker, "Haldane") and not said(broker, "Ozan")
    assert said(ask(engine, "What region is order ORD-5817 shipped from?"), "North Sea")


def test_a_chain_of_numbered_records_follows_the_number():
    engine = loaded(
        fact("p1", "Pilot Heron-7 is one of the projects in the Tidewater programme."),
        fact("p2", "Tidewater programme costs are booked against cost centre 7720."),
        fact("p3", "The budget holder of cost centre 7720 is Rosa Lindqvist."),
        fact("d1", "Pilot Heron-1 is one of the projects in the Saltash programme."),
        fact("d2", "Saltash programme costs are booked against cost centre 7702."),
        fact("d3", "The budget holder of cost centre 7702 is Dev Malhotra."),
    )
    result = ask(engine, "Who is the budget holder for pilot Heron-7?")
    assert said(result, "Rosa Lindqvist") and not said(result, "Dev Malhotra")


def test_a_question_naming_nothing_starts_from_its_own_words():
    engine = loaded(
        fact("s1", "My sister Maud moved to Ravenna in the spring."),
        fact("s2", "The nearest train station to the centre of Ravenna is Ravenna Centrale."),
        fact("s3", "My brother Teo lives in Bergamo now."),
        fact("s4", "In Bergamo the station I use is Bergamo Porta Nuova."),
    )
    sister = ask(engine, "Which station should I go to when I visit my sister?")
    assert said(sister, "Ravenna Centrale")
    assert said(ask(engine, "Which of my siblings lives near Porta Nuova station?"), "Teo")


def test_a_reverse_look_up_adds_a_row_stated_only_in_prose():
    engine = loaded(
        reports("r1", "Bea Kovacs", "Tariq Aziz"),
        fact("r2", "Noor Saleh reports directly to Tariq Aziz as of this quarter."),
        fact("r3", "Tariq Aziz reports to Greta Olsen, who reports to the CEO."),
        reports("r4", "Tariq Aziz", "Greta Olsen"),
    )
    result = ask(engine, "Who reports to Tariq Aziz?")
    top = " ".join([result.answer or "", *(h.text for h in result.hits[:3])])
    assert "Bea Kovacs" in top and "Noor Saleh" in top
    assert "Greta Olsen" not in result.hits[0].text


def test_a_possessive_relation_written_twice_takes_two_edges():
    engine = loaded(
        reports("m1", "Lena Fischer", "Omar Haddad"),
        reports("m2", "Omar Haddad", "Sofia Greco"),
        reports("m3", "Sofia Greco", "Paul Ndiaye"),
    )
    assert ask(engine, "Who is Lena Fischer's manager's manager?").answer == "Sofia Greco"


def test_an_escalation_loop_in_prose_ends_on_the_right_team():
    engine = loaded(
        fact("e1", "Team Alder escalates unresolved pages to Team Birch."),
        fact("e2", "Team Birch escalates unresolved pages back to Team Alder."),
        fact("e3", "Team Birch is on call through the Nightjar paging service."),
        fact("e4", "Team Alder is on call through the Lark paging service."),
        fact("d1", "Team Cedar escalates unresolved pages to Team Dogwood."),
        fact("d2", "Team Dogwood is on call through the Owlet paging service."),
    )
    result = ask(engine, "Which paging service is used by the team that Team Alder escalates to?")
    assert said(result, "Nightjar") and not said(result, "Owlet")
