"""Pack order: what matches the turn is read before unrelated history, updates before what
they replace, and nothing twice."""

from __future__ import annotations

from memeval.engines.reference import ReferenceEngine
from memeval.engines.reference.packs import OTHER
from memeval.engines.types import MemoryItem, Turn, TurnContext
from memeval.scoring.pack import rank, units
from tests.engines.helpers import day, run, sections, talk

CHATTER = [
    ("Book the dentist for Tuesday morning.", "Booked the dentist for Tuesday at 09:40."),
    ("Find a lasagne recipe without mushrooms.", "Here is a spinach lasagne recipe."),
    ("Remind me to water the ferns.", "Reminder set to water the ferns."),
    ("Draft a note thanking the choir.", "Drafted a short thank-you note for the choir."),
]


def chatter(engine: ReferenceEngine, threads: int, *, first_day: int) -> None:
    for n in range(threads):
        talk(engine, CHATTER, thread=f"chat-{n}", start=day(first_day + n))


def pre_turn(
    engine: ReferenceEngine, text: str, *, thread: str, in_prompt: list[Turn], at_day: int
) -> str:
    turn = Turn(role="user", text=text, at=day(at_day))
    ctx = TurnContext(agent="scribe", thread=thread, turn=turn, in_prompt=in_prompt)
    return run(engine.pre_turn("t", ctx)).markdown


def test_thread_match_comes_before_newer_unrelated_history() -> None:
    engine = ReferenceEngine()
    live = talk(
        engine,
        [("The padlock code for the bike shed is 4417.", "Noted: bike shed padlock 4417.")]
        + [(f"Sort crate {i} of the loft.", f"Crate {i} sorted.") for i in range(6)],
        thread="loft",
        start=day(1),
    )
    chatter(engine, 8, first_day=2)
    markdown = pre_turn(
        engine, "Which code opens the bike shed?", thread="loft", in_prompt=live[2:], at_day=20
    )
    lines = units(markdown)
    assert rank(lines, "4417") == 1
    assert all(line in markdown.split(f"## {OTHER}")[1] for line in lines if "dentist" in line)


def test_terse_update_keeps_its_topic_above_chatter() -> None:
    engine = ReferenceEngine()
    talk(
        engine,
        [("Our flour comes from Millbrook Farm at 30 pounds a sack.", "Noted, Millbrook Farm.")],
        thread="flour-a",
        start=day(1),
    )
    talk(
        engine,
        [
            (
                "Change of plan: we switched flour supplier to Oakfield Grain, 34 pounds a sack.",
                "Updated: flour now from Oakfield Grain.",
            )
        ],
        thread="flour-b",
        start=day(5),
    )
    talk(
        engine,
        [
            ("Draft an invoice reminder for the florist.", "Drafted an invoice reminder."),
            ("Summarise the committee minutes.", "They covered membership fees and the fair."),
        ],
        thread="admin",
        start=day(12),
    )
    markdown = pre_turn(
        engine,
        "Who supplies our flour now and at what price?",
        thread="live",
        in_prompt=[],
        at_day=20,
    )
    lines = units(markdown)
    assert rank(lines, "Oakfield") == 1
    millbrook = rank(lines, "Millbrook")
    assert millbrook is None or millbrook < (rank(lines, "invoice") or len(lines) + 1)


def test_the_same_words_are_shown_once() -> None:
    engine = ReferenceEngine()
    chatter(engine, 5, first_day=1)
    markdown = pre_turn(engine, "Did I book the dentist?", thread="live", in_prompt=[], at_day=20)
    assert sum("Booked the dentist for Tuesday" in line for line in units(markdown)) == 1


def test_cold_start_has_no_trailing_section() -> None:
    engine = ReferenceEngine()
    run(
        engine.ingest(
            "t", MemoryItem(id="d1", kind="document", title="Shed", text="The shed key is blue.")
        )
    )
    chatter(engine, 3, first_day=1)
    markdown = run(engine.start_session("t", "scribe", None, None, day(10))).markdown
    assert OTHER not in sections(markdown)
