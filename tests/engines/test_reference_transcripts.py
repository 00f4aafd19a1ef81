"""The reference engine on conversations between people: lines are speech, never slots; old
sessions stay findable; the bulk path writes without packs. Every line is invented here."""

from __future__ import annotations

from datetime import timedelta

from memeval.engines.reference import ReferenceEngine
from memeval.engines.types import Turn, TurnContext
from tests.engines.helpers import day, run


def session(engine: ReferenceEngine, thread: str, start_day: int, lines: list[tuple[str, str]]):
    turns = [
        Turn(
            role="user",
            speaker=who,
            text=text,
            id=f"{thread}-{n}",
            at=day(start_day) + timedelta(minutes=n),
        )
        for n, (who, text) in enumerate(lines)
    ]
    return run(engine.write_history("t", "assistant", thread, turns))


def ask(engine: ReferenceEngine, question: str, at_day: int = 400):
    turn = Turn(role="user", text=question, at=day(at_day))
    return run(
        engine.pre_turn("t", TurnContext(agent="assistant", thread="q", turn=turn, log=False))
    )


def units_of(pack) -> list[str]:
    return [x for ids in (pack.unit_ids or []) for x in ids]


def test_labelled_lines_are_speech_and_never_replace_each_other():
    engine = ReferenceEngine()
    session(engine, "s1", 0, [("Odile", "Odile: I adopted a ferret called Pistachio.")])
    session(engine, "s2", 30, [("Odile", "Odile: I repainted the shed a deep green.")])
    pack = ask(engine, "What is Odile's ferret called?")
    assert "s1-0" in units_of(pack)  # the later line by the same speaker replaced nothing
    line = next(x for x in pack.markdown.splitlines() if "Pistachio" in x)
    assert "Odile: I adopted" in line and "Odile: Odile:" not in line  # label read as speaker
    assert run(engine.inspect("t")).facts == []  # speech yields no `slot: value` statements


def test_an_unnamed_label_followed_by_speech_is_no_slot():
    engine = ReferenceEngine()
    run(
        engine.post_turn(
            "t", "a", "x", Turn(role="user", text="Bram: I moved to Ghent.", at=day(1))
        )
    )
    run(engine.post_turn("t", "a", "x", Turn(role="user", text="Budget: 6500 euros", at=day(2))))
    facts = run(engine.inspect("t")).facts
    assert facts == ["Budget: 6500 euros"]  # a row is still a row


def test_old_sessions_are_as_findable_as_new_ones():
    engine = ReferenceEngine()
    session(engine, "old", 0, [("Odile", "My brother Lucien restores harpsichords in Lyon.")])
    for k in range(1, 40):  # months of later chat that shares the speaker and common words
        session(
            engine,
            f"later{k}",
            k * 7,
            [("Odile", f"Lucien says hi! Week {k} was great."), ("Yann", "Great to hear, Odile!")],
        )
    pack = ask(engine, "What does Odile's brother Lucien restore?")
    assert units_of(pack)[0] == "old-0"


def test_the_answer_next_to_a_matching_question_is_in_the_pack():
    engine = ReferenceEngine()
    session(
        engine,
        "story",
        0,
        [
            ("Yann", "How did the regional chess tournament go for you?"),
            ("Odile", "Third place! I lost only to a twelve-year-old."),
        ],
    )
    filler = [
        ("Odile", f"Day {k}: the weather was mild and nothing else happened.") for k in range(200)
    ]
    session(engine, "chat", 10, filler)
    pack = ask(engine, "How did Odile do at the chess tournament?")
    assert "story-1" in units_of(pack)  # shares only her name with the question, as 200 others do


def test_bulk_history_writes_without_packs_and_probes_leave_no_trace():
    engine = ReferenceEngine()
    ids = session(engine, "s1", 0, [("Odile", "Hello Yann."), ("Yann", "Hello Odile.")])
    assert run(engine.list("t")) == ids and len(ids) == 2
    ask(engine, "Who said hello?")
    assert run(engine.list("t")) == ids  # log=False: the question was not stored
