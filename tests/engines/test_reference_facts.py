"""Bitemporal facts: validity, record time, supersession, slots, conflicts, abstention."""

from __future__ import annotations

from memeval.engines.reference.facts import FactStore, Status, View
from tests.engines.helpers import (
    abstained,
    ask,
    ask_at,
    day,
    fact,
    first_text,
    loaded,
    run,
    said,
)

KEEPER = ("Otter enclosure", "keeper", "")


def keeper(id: str, name: str, **kw):
    return fact(id, f"The otter enclosure keeper is {name}.", spo=(*KEEPER[:2], name), **kw)


# ---- tenants ------------------------------------------------------------------------------


def test_tenants_never_see_each_other():
    engine = loaded(fact("z1", "The tapir enclosure opens at noon."), tenant="north")
    run(engine.store("south", fact("z2", "The aviary opens at ten.")))
    assert abstained(ask(engine, "When does the tapir enclosure open?", tenant="south"))
    assert said(ask(engine, "When does the tapir enclosure open?", tenant="north"), "noon")
    assert run(engine.list("south")) == ["z2"]


def test_reset_drops_only_that_tenant():
    engine = loaded(fact("z1", "The tapir enclosure opens at noon."), tenant="north")
    run(engine.store("south", fact("z2", "The tapir enclosure opens at noon.")))
    run(engine.reset("north"))
    assert abstained(ask(engine, "When does the tapir enclosure open?", tenant="north"))
    assert said(ask(engine, "When does the tapir enclosure open?", tenant="south"), "noon")


def test_unknown_tenant_reads_are_empty_and_leave_no_state():
    engine = loaded()
    assert abstained(ask(engine, "anything at all?", tenant="ghost"))
    assert run(engine.conflicts("ghost", "x")) == []
    assert "ghost" not in engine._tenants


# ---- valid time and record time -----------------------------------------------------------


def test_query_at_answers_as_of_that_moment():
    engine = loaded(
        keeper("k1", "Ines Duarte", exclusive=True, valid_from=day(0), recorded_at=day(0)),
        keeper("k2", "Tomas Lind", exclusive=True, valid_from=day(30), recorded_at=day(30)),
    )
    question = "Who is the otter enclosure keeper?"
    assert said(ask_at(engine, question, day(10)), "Ines Duarte")
    assert not said(ask_at(engine, question, day(10)), "Tomas Lind")
    assert said(ask_at(engine, question, day(40)), "Tomas Lind")
    assert said(ask(engine, question), "Tomas Lind")


def test_query_at_ignores_what_was_recorded_later():
    # valid from day 0, but only learnt on day 20: on day 10 nobody knew it yet
    engine = loaded(
        keeper("k1", "Ines Duarte", valid_from=day(0), recorded_at=day(0)),
        fact(
            "k2",
            "Correction: the otter enclosure keeper is Ada Rusu.",
            spo=("Otter enclosure", "keeper", "Ada Rusu"),
            supersedes="k1",
            valid_from=day(0),
            recorded_at=day(20),
        ),
    )
    question = "Who is the otter enclosure keeper?"
    assert said(ask_at(engine, question, day(10)), "Ines Duarte")
    assert said(ask_at(engine, question, day(25)), "Ada Rusu")
    assert not said(ask_at(engine, question, day(25)), "Ines Duarte")


def test_expired_fact_is_not_current():
    engine = loaded(
        fact(
            "e1",
            "The reptile house is closed for repairs.",
            spo=("Reptile house", "status", "closed for repairs"),
            valid_from=day(0),
            valid_to=day(5),
        ),
    )
    assert said(ask_at(engine, "Is the reptile house closed for repairs?", day(2)), "closed")
    result = ask(engine, "Is the reptile house closed for repairs?")
    assert abstained(result)


def test_expired_value_hands_over_to_the_current_one():
    engine = loaded(
        fact(
            "e1",
            "The penguin feed supplier is Nordfisk.",
            spo=("Penguin feed", "supplier", "Nordfisk"),
            valid_to=day(10),
        ),
        fact(
            "e2",
            "Penguin feed now comes from Baltic Catch.",
            spo=("Penguin feed", "supplier", "Baltic Catch"),
            valid_from=day(10),
        ),
    )
    result = ask(engine, "Who is the penguin feed supplier?")
    assert said(result, "Baltic Catch")
    assert all("Nordfisk" not in h.text for h in result.hits)


def test_future_only_state_abstains():
    engine = loaded(
        fact("f0", "The aquarium is open daily.", spo=("Aquarium", "hours", "daily")),
        fact(
            "f1",
            "The shark tunnel exhibit opens to visitors.",
            spo=("Shark tunnel", "status", "open"),
            valid_from=day(4000),
        ),
    )
    assert abstained(ask(engine, "Is the shark tunnel exhibit open to visitors?"))
    assert said(ask_at(engine, "Is the shark tunnel exhibit open to visitors?", day(4001)), "open")


# ---- supersession and exclusive slots -----------------------------------------------------


def test_superseded_value_is_never_first():
    engine = loaded(
        fact("p1", "The giraffe weighs 810 kg.", spo=("Giraffe", "weight", "810 kg")),
        fact(
            "p2",
            "Vet update: the giraffe weighs 790 kg.",
            spo=("Giraffe", "weight", "790 kg"),
            supersedes="p1",
        ),
    )
    result = ask(engine, "How much does the giraffe weigh?")
    assert said(result, "790")
    assert "810" not in first_text(result) and "810" not in (result.answer or "")


def test_question_worded_like_the_old_fact_finds_its_replacement():
    engine = loaded(
        fact(
            "w1",
            "Feeding of the sea lions is at 14:00 by the north pool.",
            spo=("Sea lions", "feeding time", "14:00"),
        ),
        fact(
            "w2", "Correction: 15:30.", spo=("Sea lions", "feeding time", "15:30"), supersedes="w1"
        ),
    )
    result = ask(engine, "When is feeding of the sea lions by the north pool?")
    assert said(result, "15:30")


def test_exclusive_slot_value_that_starts_later_succeeds_without_a_conflict():
    engine = loaded(
        keeper("k1", "Ines Duarte", exclusive=True, valid_from=day(0)),
        keeper("k2", "Tomas Lind", exclusive=True, valid_from=day(9)),
    )
    result = ask(engine, "Who is the otter enclosure keeper?")
    assert result.answer == "Tomas Lind"
    assert [h.assertion_id for h in result.hits] == ["k2"]
    assert result.conflicts == []  # a change over time is history, not a dispute


def test_exclusive_slot_rivals_for_the_same_period_clash():
    engine = loaded(
        keeper("k1", "Ines Duarte", exclusive=True, recorded_at=day(0), source="roster"),
        keeper("k2", "Tomas Lind", exclusive=True, recorded_at=day(9), source="memo"),
    )
    result = ask(engine, "Who is the otter enclosure keeper?")
    assert result.answer == "Tomas Lind"
    assert [h.assertion_id for h in result.hits] == ["k2"]
    assert any({"k1", "k2"} <= set(c.ids) and c.resolved_to == "k2" for c in result.conflicts)


def test_same_source_listing_is_not_a_conflict():
    engine = loaded(
        fact("l1", "Keeper Ola feeds the lemurs.", spo=("Ola", "feeds", "lemurs")),
        fact("l2", "Keeper Ola feeds the meerkats.", spo=("Ola", "feeds", "meerkats")),
    )
    assert run(engine.conflicts("t", "l1")) == []


# ---- conflicts ----------------------------------------------------------------------------


def rival(id: str, value: str, **kw):
    return fact(
        id, f"The seal pool holds {value} litres.", spo=("Seal pool", "volume", value), **kw
    )


def test_conflict_resolves_by_trust_first():
    engine = loaded(
        rival("v1", "90000", source="survey", trust="system", recorded_at=day(0)),
        rival("v2", "70000", source="chat", trust="agent", recorded_at=day(9), confidence=1.0),
    )
    result = ask(engine, "How many litres does the seal pool hold?")
    assert said(result, "90000") and "70000" not in first_text(result)
    (report,) = run(engine.conflicts("t", "v2"))
    assert set(report.ids) == {"v1", "v2"} and report.resolved_to == "v1"
    assert "trust" in report.reason


def test_conflict_resolves_by_recency_when_trust_ties():
    engine = loaded(
        rival("v1", "90000", source="survey", recorded_at=day(0)),
        rival("v2", "70000", source="audit", recorded_at=day(9)),
    )
    assert run(engine.conflicts("t", "v1"))[0].resolved_to == "v2"
    assert said(ask(engine, "How many litres does the seal pool hold?"), "70000")


def test_conflict_resolves_by_confidence_last():
    engine = loaded(
        rival("v1", "90000", source="survey", confidence=0.9),
        rival("v2", "70000", source="audit", confidence=0.6),
    )
    assert run(engine.conflicts("t", "v2"))[0].resolved_to == "v1"


def test_full_tie_abstains_and_reports_the_conflict():
    engine = loaded(
        rival("v1", "90000", source="survey", confidence=0.8, recorded_at=day(3)),
        rival("v2", "70000", source="audit", confidence=0.8, recorded_at=day(3)),
    )
    result = ask(engine, "How many litres does the seal pool hold?")
    assert abstained(result) and result.answer is None
    assert any({"v1", "v2"} <= set(c.ids) and c.resolved_to is None for c in result.conflicts)


def test_challenge_is_a_conflict_resolved_by_the_same_order():
    engine = loaded(
        fact(
            "c1",
            "The bison herd counts 41 animals.",
            spo=("Bison herd", "size", "41"),
            source="ranger-log",
            trust="user",
        ),
        fact(
            "c2",
            "The census disputes the bison herd size.",
            source="census",
            trust="system",
            challenges="c1",
        ),
    )
    (report,) = run(engine.conflicts("t", "c1"))
    assert report.ids == ["c1", "c2"] and report.resolved_to == "c2"
    assert "challenges" in report.reason


# ---- retraction and weak data -------------------------------------------------------------


def test_retracted_fact_and_its_retraction_are_never_answers():
    engine = loaded(
        fact(
            "r0", "The koala house keeper is Ben Arlo.", spo=("Koala house", "keeper", "Ben Arlo")
        ),
        fact(
            "r1",
            "The koala house heating failed on Monday.",
            spo=("Koala house", "incident", "heating failure"),
        ),
        fact("r2", "Retraction: the koala house heating report was a mistake.", retracts="r1"),
    )
    result = ask(engine, "Did the koala house heating fail?")
    assert abstained(result)
    assert not any(h.assertion_id in ("r1", "r2") for h in result.hits)


def test_low_confidence_only_abstains():
    engine = loaded(
        fact("q0", "The red panda eats bamboo.", spo=("Red panda", "diet", "bamboo")),
        fact(
            "q1",
            "The red panda cub may be named Pip.",
            spo=("Red panda cub", "name", "Pip"),
            confidence=0.3,
        ),
    )
    assert abstained(ask(engine, "What is the red panda cub named?"))


def test_never_stored_topic_abstains():
    engine = loaded(
        fact("n1", "The flamingo lagoon is refilled weekly."),
        fact("n2", "The flamingo flock has 64 birds."),
    )
    assert abstained(ask(engine, "What is the gift shop refund window?"))


def test_question_about_an_unstored_attribute_of_a_known_entity_abstains():
    engine = loaded(
        fact(
            "a1",
            "Hugo Brandt manages the insect house.",
            spo=("Hugo Brandt", "manages", "insect house"),
        ),
        fact(
            "a2",
            "Hugo Brandt reports to Vera Holm.",
            spo=("Hugo Brandt", "reports_to", "Vera Holm"),
        ),
    )
    assert abstained(ask(engine, "What is Hugo Brandt's salary?"))
    assert said(ask(engine, "Who does Hugo Brandt report to?"), "Vera Holm")


def test_view_status_names_each_state():
    store = FactStore()
    for a in (
        fact("s1", "Alpha.", valid_to=day(1)),
        fact("s2", "Beta.", valid_from=day(5000)),
        fact("s3", "Gamma."),
        fact("s4", "Gamma withdrawn.", retracts="s3"),
        fact("s5", "Delta.", recorded_at=day(5000)),
    ):
        store.add(a)
    view = View(store, day(10))
    assert [view.status(i) for i in ("s1", "s2", "s3", "s4", "s5")] == [
        Status.expired,
        Status.future,
        Status.retracted,
        Status.retraction,
        Status.unrecorded,
    ]


def test_restoring_an_id_replaces_its_earlier_version():
    engine = loaded(
        fact("u1", "The tortoise is 80 years old.", spo=("Tortoise", "age", "80")),
        fact("u1", "The tortoise is 95 years old.", spo=("Tortoise", "age", "95")),
    )
    result = ask(engine, "How old is the tortoise?")
    assert said(result, "95") and [h.assertion_id for h in result.hits] == ["u1"]
    assert run(engine.list("t")) == ["u1"]


def test_later_start_in_a_plain_slot_is_history_not_conflict():
    engine = loaded(
        fact(
            "h1",
            "The ranger station radio channel is 7.",
            spo=("Ranger station", "channel", "7"),
            valid_from=day(0),
            source="memo",
        ),
        fact(
            "h2",
            "The ranger station radio channel is 11.",
            spo=("Ranger station", "channel", "11"),
            valid_from=day(20),
            source="notice",
        ),
    )
    question = "Which radio channel does the ranger station use?"
    now = ask(engine, question)
    assert now.answer == "11" and now.conflicts == []
    assert ask_at(engine, question, day(10)).answer == "7"
