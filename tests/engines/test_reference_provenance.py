"""Provenance on every hit: source, span, confidence, derivation, corroborating sources."""

from __future__ import annotations

from memeval.suites.fixture import Span
from tests.engines.helpers import ask, day, fact, loaded

EXCERPT = (
    "Quarterly grain report. Silo 3 holds 1200 tonnes of barley. Silo 4 is empty for cleaning."
)


def test_stated_span_is_cut_from_the_excerpt():
    start = EXCERPT.index("Silo 3")
    end = EXCERPT.index("barley.") + len("barley")
    engine = loaded(
        fact(
            "g1",
            "Silo 3 holds 1200 tonnes of barley.",
            spo=("Silo 3", "contents", "barley"),
            source="grain-report",
            excerpt=EXCERPT,
            span=Span(start=start, end=end),
            confidence=0.9,
            valid_from=day(1),
        ),
    )
    hit = ask(engine, "What does silo 3 hold?").hits[0]
    assert hit.span is not None
    assert (hit.span.start, hit.span.end) == (start, end)
    assert hit.span.text == "Silo 3 holds 1200 tonnes of barley"
    assert hit.source == "grain-report" and hit.confidence == 0.9
    assert hit.assertion_id == "g1" and hit.valid_from == day(1)


def test_without_a_span_the_best_excerpt_sentence_supports_the_fact():
    engine = loaded(
        fact("g2", "Silo 4 is empty.", spo=("Silo 4", "contents", "empty"), excerpt=EXCERPT),
    )
    span = ask(engine, "Is silo 4 empty?").hits[0].span
    assert span is not None and span.text == "Silo 4 is empty for cleaning."
    assert EXCERPT[span.start : span.end] == span.text


def test_without_excerpt_the_span_is_the_text():
    engine = loaded(fact("g3", "The mill grinds rye on Fridays."))
    span = ask(engine, "When does the mill grind rye?").hits[0].span
    assert span is not None and span.text == "The mill grinds rye on Fridays."


def test_derivation_goes_back_to_the_roots():
    engine = loaded(
        fact("d1", "Field A yielded 40 tonnes of wheat.", source="harvest-log"),
        fact("d2", "Field B yielded 25 tonnes of wheat.", source="harvest-log-b"),
        fact(
            "d3",
            "The farm's wheat total was 65 tonnes.",
            source="farm-ledger",
            derived_from=["d1", "d2"],
        ),
        fact(
            "d4",
            "The co-op credited the farm for 65 tonnes of wheat delivered.",
            source="co-op-statement",
            derived_from=["d3"],
        ),
    )
    hit = ask(engine, "How many tonnes of wheat was the co-op credit for?").hits[0]
    assert hit.assertion_id == "d4"
    assert hit.derivation == ["d3", "d1", "d2"]
    assert hit.sources == ["co-op-statement", "farm-ledger", "harvest-log", "harvest-log-b"]


def test_derivation_cycles_are_cut():
    engine = loaded(
        fact("c1", "Estimate one says the orchard has 300 trees.", derived_from=["c2"]),
        fact("c2", "Estimate two says the orchard has 300 trees.", derived_from=["c1"]),
    )
    hit = ask(engine, "How many trees does the orchard have according to estimate one?").hits[0]
    assert hit.derivation == ["c2"]


def test_corroborating_sources_are_listed_on_one_hit():
    triple = ("Tractor 9", "fuel", "diesel")
    engine = loaded(
        fact("s1", "Tractor 9 runs on diesel.", spo=triple, source="manual"),
        fact("s2", "Tractor 9 takes diesel fuel.", spo=triple, source="dealer-sheet"),
        fact("s3", "Tractor 9 runs on diesel.", source="mechanic-notes"),
    )
    result = ask(engine, "What fuel does tractor 9 run on?")
    first = result.hits[0]
    assert {"manual", "dealer-sheet", "mechanic-notes"} <= set(first.sources)
    assert len([h for h in result.hits if "diesel" in h.text]) == 1  # restatements fold in


def test_retracted_twins_do_not_corroborate():
    engine = loaded(
        fact("t1", "Barn 2 stores hay.", spo=("Barn 2", "stores", "hay"), source="map"),
        fact("t2", "Barn 2 stores hay.", spo=("Barn 2", "stores", "hay"), source="rumour"),
        fact("t3", "The rumour about barn 2 is withdrawn.", retracts="t2"),
    )
    assert ask(engine, "What does barn 2 store?").hits[0].sources == ["map"]
