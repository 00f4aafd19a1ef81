"""What replaces what without an explicit link: change wording in prose, values of the same
kind, concurrent values with their own end, and questions about how things stood before."""

from __future__ import annotations

from memeval.engines.reference import ReferenceEngine
from memeval.engines.reference.beliefs import SlotBook, extract
from memeval.engines.types import Turn, TurnContext
from tests.engines.helpers import ask, ask_at, day, fact, first_text, loaded, run, said, talk


def test_a_newer_record_worded_as_a_change_goes_first():
    engine = loaded(
        fact("h1", "The Tarrant recycling helpline is 0300 555 0142.", recorded_at=day(0)),
        fact(
            "h2",
            "Tarrant council replaced its recycling helpline number with 0300 555 0199.",
            recorded_at=day(300),
        ),
        fact("d1", "The Tarrant parking helpline is 0300 555 0170.", recorded_at=day(0)),
    )
    now = ask(engine, "What is the Tarrant recycling helpline?")
    assert "0199" in first_text(now)
    assert "0142" in first_text(ask_at(engine, "What is the Tarrant recycling helpline?", day(10)))


def test_values_with_their_own_end_hold_side_by_side():
    def member(id: str, group: str, start: int, end: int):
        return fact(
            id,
            f"Chen Wei sits on the {group}.",
            spo=("Chen Wei", "member_of", group),
            valid_from=day(start),
            valid_to=day(end),
        )

    engine = loaded(
        member("m1", "safety committee", 0, 400), member("m2", "pension board", 100, 900)
    )
    both = ask_at(engine, "Which groups is Chen Wei a member of?", day(200))
    assert {h.assertion_id for h in both.hits[:2]} == {"m1", "m2"}
    later = ask_at(engine, "Which groups is Chen Wei a member of?", day(500))
    assert said(later, "pension board") and "safety" not in (later.answer or "")


def test_a_change_replaces_an_older_value_of_the_same_kind_it_never_names():
    book = SlotBook()
    book.add(extract("The bins are collected every Friday.", day(1), 1, "agent:x", "i1"))
    book.add(extract("The bin collection moves to Monday.", day(5), 2, "agent:x", "i2"))
    terms_ = frozenset({"bin", "collect"})
    assert book.mentions_outdated(terms_, "They collect the bins every Friday.", day(1)) == [2]
    assert not book.mentions_outdated(terms_, "They collect the bins on Monday.", day(1))


def test_a_question_in_the_past_still_finds_a_replaced_turn():
    engine = ReferenceEngine()
    talk(
        engine,
        [
            ("How long is the queue?", "The print queue is 340 jobs long."),
            ("And now?", "The print queue is now 12 jobs long."),
        ],
        thread="ops",
        start=day(1),
    )

    def pack(text: str) -> str:
        ctx = TurnContext(
            agent="scribe", thread="ask", turn=Turn(role="user", text=text, at=day(9))
        )
        return run(engine.pre_turn("t", ctx)).markdown

    current = pack("How long is the print queue?")
    assert "12 jobs" in current and "340" not in current
    before = pack("How long was the print queue at first?")
    assert before.index("12 jobs") < before.index("340 jobs")


def test_the_source_passage_is_searched_too():
    engine = loaded(
        fact(
            "e1",
            "The Kestrel bridge has a weight limit of 7.5 tonnes.",
            spo=("Kestrel bridge", "weight_limit", "7.5 tonnes"),
            excerpt="Kestrel bridge: vehicles over 7.5 tonnes are prohibited from crossing.",
            source="signage-register",
        ),
        fact("d1", "The Merlin bridge has a weight limit of 18 tonnes."),
    )
    result = ask(engine, "Which vehicles are prohibited from crossing the Kestrel bridge?")
    assert said(result, "7.5 tonnes") and result.hits[0].source == "signage-register"


def test_a_phrase_of_the_question_outranks_its_words_apart():
    engine = loaded(
        fact("a1", "The Calder data centre power usage is 3.1 MW on average."),
        fact("a2", "Calder's power usage effectiveness was 1.42 last quarter."),
        fact("a3", "The Calder data centre cooling plant was upgraded in 2024."),
    )
    assert "1.42" in first_text(
        ask(engine, "What is the Calder data centre's power usage effectiveness?")
    )
