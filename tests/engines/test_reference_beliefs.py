"""Belief building: the latest value per slot, disagreement kept, beliefs in later packs."""

from __future__ import annotations

from memeval.engines.reference import ReferenceEngine
from memeval.engines.reference.beliefs import SlotBook, extract
from memeval.engines.types import MemoryItem, Turn, TurnContext
from tests.engines.helpers import day, run, talk


def shapes(text: str) -> list[tuple[str, str, bool]]:
    return [(st.slot, st.value, st.change) for st in extract(text, None, 0, "s", "o")]


def test_sentence_shapes():
    assert shapes("Our van rental is 300 pounds.") == [("van rental", "300 pounds", False)]
    assert shapes("We bumped the van rental to 350.") == [("van rental", "350", True)]
    assert shapes("The van rental was lowered to 280 pounds.") == [
        ("van rental", "280 pounds", True)
    ]
    assert shapes("Correction: the van rental is 320.") == [("van rental", "320", True)]
    assert shapes("OK, the van rental is 330 now.") == [("van rental", "330", True)]
    assert shapes("Delivery takes three days.") == [("Delivery", "three days", False)]
    assert shapes("Depot: Leeds north.") == [("Depot", "Leeds north", False)]


def test_questions_pronouns_and_dangling_slots_state_nothing():
    assert shapes("Is the van rental 300 pounds?") == []
    assert shapes("It is raining again.") == []
    assert shapes("Grab the invoices from last month.") == []


def test_slots_with_the_same_head_merge():
    book = SlotBook()
    book.add(extract("The courier van is white.", day(1), 1, "a", "i1"))
    book.add(extract("The van is now blue.", day(2), 2, "a", "i2"))
    (record,) = book.records()
    assert record.latest.value == "blue" and record.others == ["white"]
    assert book.superseded(1) and not book.superseded(2)


def test_update_by_the_same_source_is_not_a_disagreement():
    book = SlotBook()
    book.add(extract("The depot manager is Ravi.", day(1), 1, "agent:x", "i1"))
    book.add(extract("The depot manager is Nora.", day(3), 2, "agent:x", "i2"))
    (record,) = book.records()
    assert not record.contested and record.bullet() == "depot manager: Nora"
    assert record.to_belief().disagreement == []


def test_different_sources_without_change_wording_disagree():
    book = SlotBook()
    book.add(extract("Returns take 14 days.", None, 1, "document:policy", "policy"))
    book.add(extract("Returns take 30 days.", day(2), 2, "agent:x", "i2"))
    (record,) = book.records()
    assert record.contested
    assert record.bullet() == "Returns: sources disagree: 14 days vs 30 days"
    assert record.to_belief().disagreement == ["14 days"]
    assert not book.superseded(1)


def test_restatement_of_an_old_value_is_outdated():
    book = SlotBook()
    book.add(extract("The hall booking is 900 euros.", day(1), 1, "agent:x", "i1"))
    book.add(extract("We cut the hall booking to 700 euros.", day(4), 2, "agent:x", "i2"))
    terms = frozenset({"hall", "book"})
    assert book.mentions_outdated(terms, "Noted the hall booking at 900 euros.", day(1))
    assert not book.mentions_outdated(terms, "Hall booking: 700 euros.", day(1))


def test_build_beliefs_then_packs_show_them():
    engine = ReferenceEngine()
    run(
        engine.ingest(
            "t",
            MemoryItem(id="policy", title="Returns", text="Returns take 14 days from delivery."),
        )
    )
    talk(engine, [("The depot manager is Ravi.", "Noted.")], thread="a", start=day(1))
    talk(
        engine,
        [("Update: the depot manager is now Nora.", "Nora it is.")],
        thread="b",
        start=day(5),
    )
    talk(
        engine,
        [("Heads up, returns take 30 days now per the ops lead.", "Logged.")],
        thread="c",
        start=day(6),
    )
    report = run(engine.build_beliefs("t"))
    beliefs = {b.subject.lower(): b for b in report.beliefs}
    assert report.built == len(report.beliefs)
    assert beliefs["depot manager"].value == "Nora"
    turn = Turn(role="user", text="Who is the depot manager?", at=day(9))
    markdown = run(
        engine.pre_turn("t", TurnContext(agent="scribe", thread="q", turn=turn))
    ).markdown
    learnings = markdown.split("## Learnings")[1].split("##")[0]
    assert "depot manager: Nora" in learnings
    derived = run(engine.inspect("t"))
    assert any("depot manager: Nora" in b for b in derived.beliefs)
    assert "depot manager: Ravi" in derived.facts


def test_disagreement_is_flagged_in_packs():
    engine = ReferenceEngine()
    run(engine.ingest("t", MemoryItem(id="policy", title="Returns", text="Returns take 14 days.")))
    talk(engine, [("The warehouse says returns take 30 days.", "Noted.")], thread="c", start=day(2))
    run(engine.build_beliefs("t"))
    cold = run(engine.start_session("t", "scribe", None, None, day(3))).markdown
    assert "sources disagree: 14 days vs 30 days" in cold


def test_rebuilding_replaces_earlier_beliefs():
    engine = ReferenceEngine()
    talk(engine, [("The depot manager is Ravi.", "Noted.")], thread="a", start=day(1))
    run(engine.build_beliefs("t"))
    talk(engine, [("The depot manager is Nora.", "Noted.")], thread="b", start=day(4))
    run(engine.build_beliefs("t"))
    cold = run(engine.start_session("t", "scribe", None, None, day(5))).markdown
    assert "depot manager: Nora" in cold and "depot manager: Ravi" not in cold


def test_beliefs_drawn_only_from_turns_in_the_prompt_stay_out():
    engine = ReferenceEngine()
    turns = talk(engine, [("The gate code is 4471.", "Gate code noted.")], thread="g", start=day(1))
    run(engine.build_beliefs("t"))
    asked = Turn(role="user", text="What is the gate code?", at=day(2))
    ctx = TurnContext(agent="scribe", thread="g", turn=asked, in_prompt=turns)
    assert "4471" not in run(engine.pre_turn("t", ctx)).markdown


def test_events_are_facts_but_not_slots():
    book = SlotBook()
    book.add(extract("The export job failed: disk full.", day(1), 1, "agent:x", "i1"))
    book.add(extract("The export job failed: timeout.", day(2), 2, "agent:x", "i2"))
    assert book.records() == []
    assert [st.value for st in book.statements()] == ["disk full", "timeout"]
    assert not book.superseded(1)


class _BuildsTwice(ReferenceEngine):
    """A belief build that reaches the engine twice, as a retried request does."""

    async def build_beliefs(self, tenant: str):  # type: ignore[no-untyped-def]
        await super().build_beliefs(tenant)
        return await super().build_beliefs(tenant)


def test_a_repeated_belief_build_ranks_every_later_pack_as_one_build_does():
    """Beliefs a rebuild retires leave the index's statistics: with them counted, a retried
    build reordered an agent's history in the next pack (seen behind the fault proxy)."""
    import asyncio

    from memeval.runner import RunOptions, run_case
    from memeval.suites.catalog import resolve

    (case,) = [c.case for c in resolve("lifecycle").cases if c.case.id == "lifecycle/conflicts"]

    def packs(engine: ReferenceEngine) -> list[str]:
        result = asyncio.run(run_case(case, engine, run_id="twice", options=RunOptions()))
        return [p.pack for p in result.probes]

    once, twice = packs(ReferenceEngine()), packs(_BuildsTwice())
    assert len(once) > 4
    assert twice == once
