"""Entity graph readings: multi-hop chains, reverse look-ups, direction, cycles."""

from __future__ import annotations

from memeval.engines.reference.facts import FactStore
from memeval.engines.reference.graph import Graph
from tests.engines.helpers import abstained, ask, fact, first_text, loaded, said

CREW = [
    fact(
        "h1", "Rosa Vidal sails with the Petrel crew.", spo=("Rosa Vidal", "crew_of", "Petrel crew")
    ),
    fact(
        "h2",
        "The Petrel crew is berthed at Quay Seven.",
        spo=("Petrel crew", "berthed_at", "Quay Seven"),
    ),
    fact(
        "h3",
        "Quay Seven belongs to the Harwick harbour.",
        spo=("Quay Seven", "part_of", "Harwick harbour"),
    ),
    fact("h4", "Jon Eck sails with the Gannet crew.", spo=("Jon Eck", "crew_of", "Gannet crew")),
    fact(
        "h5",
        "The Gannet crew is berthed at Quay Two.",
        spo=("Gannet crew", "berthed_at", "Quay Two"),
    ),
]
CHAIN = [
    fact("m1", "Lio Park reports to Dana Ruiz.", spo=("Lio Park", "reports_to", "Dana Ruiz")),
    fact("m2", "Sven Ohm reports to Dana Ruiz.", spo=("Sven Ohm", "reports_to", "Dana Ruiz")),
    fact("m3", "Dana Ruiz reports to Abel Kent.", spo=("Dana Ruiz", "reports_to", "Abel Kent")),
]


def test_two_hop_chain_reaches_the_asked_kind_of_thing():
    result = ask(loaded(*CREW), "At which quay is Rosa Vidal berthed?")
    assert result.answer == "Quay Seven"
    assert "Quay Seven" in first_text(result)
    assert result.hits[0].derivation[:2] == ["h1", "h2"]
    assert "Quay Two" not in first_text(result)


def test_three_hop_chain():
    result = ask(loaded(*CREW), "Which harbour is Rosa Vidal's boat part of?")
    assert result.answer == "Harwick harbour"
    assert result.hits[0].derivation[:3] == ["h1", "h2", "h3"]


def test_path_hit_joins_the_facts_and_their_sources():
    crew = [
        CREW[0].model_copy(update={"source": "roster"}),
        CREW[1].model_copy(update={"source": "harbour-master"}),
    ]
    hit = ask(loaded(*crew), "At which quay is Rosa Vidal berthed?").hits[0]
    assert hit.text.startswith("Rosa Vidal sails with the Petrel crew.")
    assert set(hit.sources) == {"roster", "harbour-master"}
    assert hit.span is not None and "Quay Seven" in hit.span.text


def test_reverse_lookup_lists_every_subject():
    result = ask(loaded(*CHAIN), "Who reports to Dana Ruiz?")
    assert result.answer == "Lio Park, Sven Ohm"
    texts = " ".join(h.text for h in result.hits)
    assert "Abel Kent" not in texts and "Abel Kent" not in result.answer


def test_forward_lookup_when_the_entity_comes_first():
    result = ask(loaded(*CHAIN), "Who does Dana Ruiz report to?")
    assert result.answer == "Abel Kent"
    assert [h.assertion_id for h in result.hits] == ["m3"]


def test_by_before_the_entity_flips_the_direction():
    facts = [
        fact("b1", "Nia Ford mentors Kai Lund.", spo=("Nia Ford", "mentors", "Kai Lund")),
        fact("b2", "Kai Lund mentors Ole Berg.", spo=("Kai Lund", "mentors", "Ole Berg")),
    ]
    assert said(ask(loaded(*facts), "Who is mentored by Kai Lund?"), "Ole Berg")
    assert said(ask(loaded(*facts), "Who mentors Kai Lund?"), "Nia Ford")


def test_cycles_end_and_still_answer():
    loop = [
        fact("y1", "Pump A feeds pump B.", spo=("Pump A", "feeds", "Pump B")),
        fact("y2", "Pump B feeds pump C.", spo=("Pump B", "feeds", "Pump C")),
        fact("y3", "Pump C feeds pump A.", spo=("Pump C", "feeds", "Pump A")),
        fact("y4", "Pump C sits in the boiler room.", spo=("Pump C", "located_in", "boiler room")),
    ]
    engine = loaded(*loop)
    assert ask(engine, "Which pump does Pump A feed?").answer == "Pump B"
    result = ask(engine, "Which room is downstream of Pump A located in?")
    assert result.answer == "boiler room"


def test_walk_expands_each_node_once():
    store, graph = FactStore(), Graph()
    for i in range(6):
        graph.add(
            store.add(
                fact(f"w{i}", f"Node {i} links on.", spo=(f"n{i}", "links", f"n{(i + 1) % 6}"))
            )
        )
    paths = list(graph.walk("n0", 10, lambda _: True, store.facts))
    assert len(paths) == 6  # one edge per node, the last one closing the loop
    assert paths[-1].edges == tuple(f"w{i}" for i in range(6))


def test_partial_names_match_only_when_unambiguous():
    store, graph = FactStore(), Graph()
    for a in CREW:
        graph.add(store.add(a))
    assert {m.node for m in graph.mentions("Where is the Petrel moored?")} == {"petrel crew"}
    assert graph.mentions("Which crew is moored?") == []  # "crew" names two nodes


def test_unknown_relation_of_a_known_entity_abstains():
    assert abstained(ask(loaded(*CHAIN), "What is Lio Park's shoe size?"))
