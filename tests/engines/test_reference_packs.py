"""Context packs: sections, budget, exclusions, compaction, cold starts, updates first."""

from __future__ import annotations

from datetime import timedelta

from memeval.engines.pack import CHARS_PER_TOKEN, SECTION_ORDER
from memeval.engines.reference import ReferenceEngine
from memeval.engines.reference.disagreement import amounts
from memeval.engines.reference.packs import DEFAULT_BUDGET
from memeval.engines.types import MemoryItem, Turn, TurnContext
from tests.engines.helpers import day, run, sections, talk


def pre_turn(engine, text, *, thread="live", agent="scribe", at=None, in_prompt=(), tenant="t"):
    turn = Turn(role="user", text=text, at=at or day(60))
    ctx = TurnContext(agent=agent, thread=thread, turn=turn, in_prompt=list(in_prompt))
    return run(engine.pre_turn(tenant, ctx)).markdown


def ingest(engine, id, text, *, kind="document", title="", tenant="t", **kw):
    item = MemoryItem(id=id, kind=kind, title=title, text=text, **kw)
    return run(engine.ingest(tenant, item))


def test_sections_come_in_priority_order():
    engine = ReferenceEngine()
    ingest(engine, "l1", "Label every sample jar with the collection date.", kind="learning")
    ingest(engine, "d1", "Sample jars are stored in cold room B.", title="Lab guide")
    talk(
        engine,
        [("Sample jar 14 cracked.", "Logged the cracked sample jar.")],
        thread="old",
        start=day(1),
    )
    talk(
        engine,
        [("Sample jar 15 arrived.", "Shelved sample jar 15.")],
        thread="other",
        start=day(2),
        agent="courier",
    )
    live = talk(
        engine,
        [("Sample jar 16 looks cloudy.", "Flagged sample jar 16.")],
        thread="live",
        start=day(3),
    )
    markdown = pre_turn(engine, "Where do sample jars go?", in_prompt=live[1:])
    assert markdown.startswith("# Context for the reply\n")
    assert sections(markdown) == list(SECTION_ORDER)
    assert "courier" in markdown.split("## Team conversations")[1]


def test_pack_stays_within_budget_and_keeps_the_best():
    engine = ReferenceEngine()
    for i in range(300):
        ingest(engine, f"d{i}", f"Shelf {i} of the archive holds ledgers from year {1700 + i}.")
    ingest(engine, "needle", "The wax seal press is kept in the archive vault.")
    markdown = pre_turn(engine, "Where is the wax seal press kept?")
    assert len(markdown) <= DEFAULT_BUDGET * CHARS_PER_TOKEN
    assert "wax seal press is kept in the archive vault" in markdown
    assert markdown.count("\n- ") > 20  # the rest of the budget is filled


def test_turns_still_in_the_prompt_and_the_current_turn_are_left_out():
    engine = ReferenceEngine()
    turns = talk(
        engine,
        [
            ("The kiln firing is set for 1240 degrees.", "Kiln at 1240 degrees, noted."),
            ("Glaze batch seven uses cobalt.", "Cobalt for glaze batch seven."),
            ("The kiln shelf cracked last week.", "I will order a new kiln shelf."),
        ],
        thread="studio",
        start=day(1),
    )
    markdown = pre_turn(
        engine,
        "What temperature is the kiln firing?",
        thread="studio",
        in_prompt=turns[2:],
        at=day(2),
    )
    assert "1240" in markdown
    assert "cobalt" not in markdown.lower() and "shelf cracked" not in markdown
    assert "What temperature" not in markdown
    assert "## Earlier in this thread" in markdown


def test_other_tenants_never_appear():
    engine = ReferenceEngine()
    ingest(engine, "secret", "Project Heron buys the Lindqvist bakery for 4 million.", tenant="a")
    ingest(engine, "plain", "The bakery opens at six.", tenant="b")
    markdown = pre_turn(engine, "What do we know about the Lindqvist bakery deal?", tenant="b")
    assert "Heron" not in markdown and "Lindqvist bakery for" not in markdown
    assert "opens at six" in markdown


def test_compaction_carries_the_dropped_facts_over():
    engine = ReferenceEngine()
    facts = [
        ("The choir tour starts in Ghent on 3 May.", "Ghent, 3 May, noted."),
        ("Our tour budget is 22000 euros.", "Budget 22000 euros recorded."),
        ("Soprano Lina Moss sings the solo.", "Lina Moss has the solo."),
    ]
    filler = [
        (f"Rehearsal note {i}: keep the tempo steady in bar {i}.", "Will do.") for i in range(60)
    ]
    turns = talk(engine, facts + filler, thread="tour", start=day(1))
    pack = run(engine.recall_for_compaction("t", "scribe", "tour", turns[:80]))
    for value in ("Ghent", "3 May", "22000", "Lina Moss"):
        assert value in pack.markdown
    assert pack.tokens <= DEFAULT_BUDGET


def test_cold_start_surfaces_learnings_standing_orders_and_alarms():
    engine = ReferenceEngine()
    ingest(
        engine, "l1", "Quote prices in euros with VAT included.", kind="learning", confidence=0.9
    )
    chatter = [
        (f"Routine check {i} of the greenhouse sprinklers went fine.", "Good.") for i in range(80)
    ]
    talk(engine, chatter[:40], thread="a", start=day(1))
    talk(
        engine,
        [("Always copy Marta on invoices from now on.", "Will copy Marta.")],
        thread="b",
        start=day(2),
    )
    talk(engine, chatter[40:], thread="c", start=day(3))
    talk(
        engine,
        [("Sprinkler pump 2 failed overnight for the first time.", "Logged.")],
        thread="d",
        start=day(4),
    )
    talk(engine, chatter[:40], thread="e", start=day(5))
    markdown = run(engine.start_session("t", "scribe", None, None, day(6))).markdown
    assert markdown.startswith("# Session start")
    assert "VAT included" in markdown
    assert "Always copy Marta" in markdown
    assert "pump 2 failed" in markdown


def test_resume_puts_the_thread_in_earlier_in_this_thread():
    engine = ReferenceEngine()
    talk(
        engine,
        [("Pick the blue tiles for the lobby.", "Blue tiles chosen.")],
        thread="lobby",
        start=day(1),
    )
    talk(
        engine,
        [("The roof survey is on Friday.", "Roof survey Friday.")],
        thread="roof",
        start=day(2),
    )
    markdown = run(engine.start_session("t", "scribe", "lobby", None, day(3))).markdown
    earlier = markdown.split("## Earlier in this thread")[1]
    assert "blue tiles" in earlier.lower() and "Roof survey" not in earlier


def test_focus_ranks_the_matching_item_first():
    engine = ReferenceEngine()
    talk(
        engine,
        [(f"Note {i}: the hedge by gate {i} needs trimming.", "Noted.") for i in range(5)]
        + [("My timezone is Pacific time.", "Pacific time, got it.")],
        thread="x",
        start=day(1),
    )
    markdown = run(engine.start_session("t", "scribe", None, "timezone", day(2))).markdown
    bullets = [line for line in markdown.splitlines() if line.startswith("- ")]
    assert "timezone is Pacific" in bullets[0] or "Pacific time" in bullets[0]


def test_newer_value_comes_before_the_value_it_replaced():
    engine = ReferenceEngine()
    talk(
        engine,
        [("The regatta starts at pier 3 with all twelve boats.", "Pier 3.")],
        thread="w1",
        start=day(1),
    )
    talk(
        engine,
        [("Change of plan: the regatta now starts at pier 9.", "Updated to pier 9.")],
        thread="w2",
        start=day(8),
    )
    markdown = pre_turn(engine, "Which pier does the regatta with all twelve boats start at?")
    assert markdown.index("pier 9") < markdown.index("pier 3")


def test_a_restated_old_value_is_dropped_once_replaced():
    engine = ReferenceEngine()
    talk(
        engine,
        [("The ferry fare is 12 dollars.", "Logged a ferry fare of 12 dollars.")],
        thread="w1",
        start=day(1),
    )
    talk(
        engine,
        [("We raised the ferry fare to 15 dollars.", "Ferry fare updated.")],
        thread="w2",
        start=day(8),
    )
    markdown = pre_turn(engine, "How much is the ferry fare?")
    assert "15 dollars" in markdown and "12 dollars" not in markdown


def test_unanswered_questions_stay_out_of_packs():
    engine = ReferenceEngine()
    talk(engine, [("The llama shearing is in June.", "June it is.")], thread="a", start=day(1))
    pre_turn(engine, "When is the llama shearing?", thread="q1", at=day(2))
    markdown = pre_turn(engine, "When is the llama shearing?", thread="q2", at=day(3))
    assert "llama shearing is in June" in markdown
    assert markdown.count("When is the llama shearing?") == 0


def test_compile_context_is_titled_with_its_heading():
    engine = ReferenceEngine()
    ingest(engine, "d1", "Visitors must wear hard hats on the quarry floor.", title="Safety")
    pack = run(engine.compile_context("t", "scribe", "Quarry safety rules", day(1)))
    assert pack.markdown.startswith("# Quarry safety rules\n")
    assert "hard hats" in pack.markdown


def test_list_shows_every_write_at_once_and_forget_drops_the_tenant():
    engine = ReferenceEngine()
    ingest(engine, "doc-1", "A long passage. " * 80)
    talk(engine, [("Hello there.", "Hi.")], thread="th", start=day(1))
    assert run(engine.list("t")) == ["doc-1", "th#1-user", "th#2-assistant"]
    run(engine.forget("t"))
    assert run(engine.list("t")) == []
    assert "passage" not in pre_turn(engine, "What was the long passage?")


def test_long_documents_are_split_into_passages():
    engine = ReferenceEngine()
    text = " ".join(f"Clause {i} covers topic number {i}." for i in range(60))
    ingest(engine, "contract", text, title="Contract")
    markdown = pre_turn(engine, "What does clause 42 cover?")
    line = next(line for line in markdown.splitlines() if "Clause 42" in line)
    assert len(line) < 600 and line.startswith("- Contract:")


def test_tool_calls_are_kept_by_name_and_id():
    engine = ReferenceEngine()
    reply = Turn(
        role="assistant",
        text="Looked up the parcel: it is in Leeds.",
        at=day(1),
        tool_calls=[{"name": "track_parcel", "id": "call-7"}],
    )
    run(engine.post_turn("t", "scribe", "th", reply))
    markdown = pre_turn(engine, "Where is the parcel?", at=day(1) + timedelta(hours=1))
    assert "track_parcel#call-7" in markdown


def test_ingesting_an_id_again_replaces_the_document():
    engine = ReferenceEngine()
    ingest(engine, "hours", "The museum opens at 9.", title="Hours")
    ingest(engine, "hours", "The museum opens at 10.", title="Hours")
    assert run(engine.list("t")) == ["hours"]
    markdown = pre_turn(engine, "When does the museum open?")
    assert "opens at 10" in markdown and "opens at 9" not in markdown


def test_sources_that_give_different_amounts_are_flagged():
    engine = ReferenceEngine()
    ingest(engine, "spec", "Each glass panel weighs 18 kilograms when crated.", title="Spec sheet")
    talk(
        engine,
        [("The depot says a crated glass panel weighs 23 kilograms.", "Logged.")],
        thread="depot",
        start=day(1),
    )
    talk(engine, [("Crate 4 left the depot with 12 panels.", "Noted.")], thread="x", start=day(2))
    markdown = pre_turn(engine, "How many kilograms does a glass panel weigh?")
    flagged = [line for line in markdown.splitlines() if "sources disagree" in line]
    assert len(flagged) == 2
    assert any("18 kilograms" in line and "see also scribe" in line for line in flagged)
    assert any("23 kilograms" in line and "Spec sheet" in line for line in flagged)
    assert "12 panels." in markdown and "12 panels. (" not in markdown


def test_one_source_restating_the_same_amount_is_not_flagged():
    engine = ReferenceEngine()
    ingest(engine, "spec", "Each glass panel weighs 18 kilograms.", title="Spec sheet")
    talk(
        engine,
        [("A glass panel weighs eighteen kilograms, right?", "Yes, 18 kilograms.")],
        thread="a",
        start=day(1),
    )
    assert "disagree" not in pre_turn(engine, "How many kilograms does a glass panel weigh?")


def test_a_document_is_never_dropped_for_a_conversation_that_contradicts_it():
    engine = ReferenceEngine()
    ingest(engine, "rates", "The ferry fare is 12 dollars.", title="Fare sheet", at=day(0))
    talk(engine, [("The ferry fare is now 15 dollars.", "Noted.")], thread="w", start=day(3))
    markdown = pre_turn(engine, "How much is the ferry fare?")
    assert "Fare sheet: The ferry fare is 12 dollars." in markdown
    assert "15 dollars" in markdown and "sources disagree" in markdown


def test_amounts_read_decimals_words_and_percentages():
    assert amounts("Churn was 4.2% and rose by five percent.") == {
        ("%",): {"4.2"},
        ("percent",): {"5"},
    }
    assert amounts("The call is at 09:00 UTC for 30 minutes.") == {("minut",): {"30"}}
