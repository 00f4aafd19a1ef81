"""Format-v2 scenarios: free turn lists with speakers, bulk history, dated and trusted
documents, probe isolation, questions for resume and context_doc, tool results only through
the reply, abstention probes, fresh-first over every expected string."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from memeval.engines.naive import NaiveEngine
from memeval.engines.types import Pack, TurnContext
from memeval.results import Phase
from memeval.scoring.kpis import kpis
from memeval.scoring.pack import fresh_first
from memeval.suites.scenario import Probe, Style
from tests.format.helpers import Recording, run, scenario

TRANSCRIPT = """
kind: scenario
name: book_club
title: Three people talk; nobody replies as an assistant
start: 2026-03-02
threads:
  - id: club
    bulk: {bulk}
    turns:
      - speaker: Caroline
        text: I finally finished the lighthouse novel last night.
        at: "2026-03-02T19:00:00Z"
      - {{speaker: Melanie, text: Our next meeting moves to the Harbour Street library.}}
      - {{id: pick, speaker: Jon, text: "Next month we read The Salt Road, my pick."}}
      - speaker: Caroline
        role: assistant
        text: Noted for everyone.
        at: "2026-03-03T08:00:00Z"
probes:
  - id: pick
    question: Which book is the club reading next month?
    style: lexical
    expect: [The Salt Road]
    evidence: [pick]
    log: false
"""


def test_a_bulk_thread_is_one_write_history_call_and_no_pack():
    engine = Recording()
    result = run(scenario(TRANSCRIPT.format(bulk="true")), engine)
    writes = [c for c in engine.calls if c in ("pre_turn", "post_turn", "write_history")]
    assert writes == ["write_history"]
    assert [t.speaker for t in engine.turns[:4]] == ["Caroline", "Melanie", "Jon", "Caroline"]
    assert [t.id for t in engine.turns[:4]] == ["club.0", "club.1", "pick", "club.3"]
    assert engine.turns[1].at == datetime(2026, 3, 2, 19, 1, tzinfo=UTC)
    assert result.status.value == "done" and all(p.hit for p in result.probes)


def test_a_free_thread_played_live_recalls_for_user_turns_only():
    engine = Recording()
    run(scenario(TRANSCRIPT.format(bulk="false")), engine)
    writes = [c for c in engine.calls if c in ("pre_turn", "post_turn", "write_history")]
    assert writes[:4] == ["pre_turn", "pre_turn", "pre_turn", "post_turn"]


def test_the_default_write_history_logs_every_turn_without_a_pack():
    class Counting(NaiveEngine):
        packs = 0

        async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
            if ctx.log:
                Counting.packs += 1
            return await super().pre_turn(tenant, ctx)

    engine = Counting()
    result = run(scenario(TRANSCRIPT.format(bulk="true")), engine)
    assert Counting.packs == 0
    assert result.status.value == "done"


def test_probe_isolation_keeps_questions_out_of_memory():
    asked = scenario(TRANSCRIPT.format(bulk="true"))
    isolated, logged = Recording(), Recording()
    run(asked, isolated, keep=True)
    run(
        asked.model_copy(
            update={
                "log_probes": True,
                "probes": [p.model_copy(update={"log": None}) for p in asked.probes],
            }
        ),
        logged,
        keep=True,
    )
    # the logged run wrote its question twice (recall and synthesis): the pack of the second
    # phase can see the first phase's question; the isolated run wrote nothing
    assert len(logged._tenants) == len(isolated._tenants) == 1
    assert [len(s.texts) for s in isolated._tenants.values()] == [4]
    assert [len(s.texts) for s in logged._tenants.values()] == [6]


RESUME = """
kind: scenario
name: resume_asks
title: Resume and context documents receive the question
start: 2026-03-02
threads:
  - id: intro
    exchanges:
      - {user: "I'm Dana and I run payments.", reply: Nice to meet you Dana.}
probes:
  - {id: cold, question: "Who runs payments?", via: resume, style: lexical, expect: [Dana]}
  - id: doc
    question: Who runs payments?
    via: context_doc
    heading: Team
    style: lexical
    expect: [Dana]
"""


def test_resume_and_context_doc_receive_the_question():
    engine = Recording()
    run(scenario(RESUME), engine)
    assert engine.questions == ["Who runs payments?"] * 4


def test_an_engine_with_the_old_signatures_still_runs():
    result = run(scenario(RESUME), NaiveEngine())  # naive's start_session has no `question`
    assert {p.status.value for p in result.probes} <= {"passed", "failed", "unsupported"}
    assert any(p.via == "resume" and p.error is None for p in result.probes)


TOOLS = """
kind: scenario
name: tool_reply
title: A tool result lives only in the reply
start: 2026-03-02
threads:
  - id: t
    exchanges:
      - user: What's the ticket?
        tools: [{name: create_ticket, result: "created INC-5521"}]
        reply: I opened a ticket for it.
probes:
  - {id: ticket, question: "What is the ticket id?", style: lexical, expect: [INC-5521]}
"""


def test_a_tool_result_the_reply_leaves_out_is_not_written():
    engine = Recording()
    result = run(scenario(TOOLS), engine)
    reply = next(t for t in engine.turns if t.role == "assistant")
    assert reply.text == "I opened a ticket for it."
    assert [c.name for c in reply.tool_calls] == ["create_ticket"]
    assert not any(p.hit for p in result.probes)


ABSTAIN = """
kind: scenario
name: never_said
title: Nobody ever named the dentist
start: 2026-03-02
threads:
  - id: t
    exchanges:
      - {user: My dentist appointment is on Friday at 3pm., reply: Noted.}
      - {user: The dentist's office is on Elm Street., reply: Got it.}
probes:
  - id: dentist_name
    question: What is my dentist's name?
    style: lexical
    abstain: true
    forbidden: [Elm]
    tags: [category:adversarial]
"""


def test_naive_fails_an_abstention_probe_and_an_abstaining_engine_passes():
    said = scenario(ABSTAIN)
    naive = run(said, NaiveEngine())
    assert all(p.abstain and not p.hit and p.abstained is False for p in naive.probes)

    class Silent(NaiveEngine):
        async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
            pack = await super().pre_turn(tenant, ctx)
            if ctx.log:
                return pack
            return Pack(markdown="# Context for the reply\n", abstained=True)

    quiet = said.model_copy(update={"log_probes": False})
    silent = run(quiet, Silent())
    assert all(p.hit and p.extractive_ok for p in silent.probes)
    records = {k.name: k for k in kpis([naive])}
    assert records["abstain_probes"].value == 0.0 and records["abstain_probes"].n == 2
    assert records["leaks"].n == 0  # an abstain probe's lures are not leak checks
    assert {k.name: k for k in kpis([silent])}["abstain_probes"].value == 1.0


def test_abstain_probes_validate():
    with pytest.raises(ValidationError, match="expects nothing"):
        Probe(id="p", question="q", style=Style.lexical, abstain=True, expect=["x"])
    with pytest.raises(ValidationError, match="`expect` string"):
        Probe(id="p", question="q", style=Style.lexical)


def test_fresh_first_compares_every_expected_string():
    probe = Probe(
        id="p",
        question="Where and when is the offsite?",
        style=Style.lexical,
        expect=["Porto", "June"],
        stale=["Lisbon"],
    )
    assert fresh_first(["Offsite moved to Porto", "June 4", "was Lisbon"], probe) == (True, False)
    # the city is fresh first, but the date comes after the stale city: not fresh first
    assert fresh_first(["Offsite moved to Porto", "was Lisbon", "June 4"], probe) == (
        False,
        True,
    )


DATED = """
kind: scenario
name: policy_update
title: A policy document is replaced on day 10
start: 2026-03-02
documents:
  - {id: v1, title: Refund policy, text: Refunds settle in five business days.}
  - id: v2
    title: Refund policy
    text: Refunds settle in three business days.
    day: 10
    trust: system
    supersedes: v1
learnings:
  - {id: l1, text: Quote refund times from the policy document., at: "2026-03-05T10:00:00Z"}
probes:
  - id: days
    question: How long do refunds take?
    style: lexical
    expect: [three]
    stale: [five]
"""


class Items(NaiveEngine):
    def __init__(self) -> None:
        super().__init__()
        self.items: list = []

    async def ingest(self, tenant, item):
        self.items.append(item)
        return await super().ingest(tenant, item)


def test_documents_and_learnings_carry_date_trust_and_supersedes_in_time_order():
    engine = Items()
    result = run(scenario(DATED), engine)
    assert [i.id for i in engine.items] == ["v1", "l1", "v2"]
    v2 = engine.items[-1]
    assert (v2.trust, v2.supersedes, v2.at) == ("system", "v1", datetime(2026, 3, 12, tzinfo=UTC))
    assert result.evaluated_at == datetime(2026, 3, 13, 9, tzinfo=UTC)


def test_supersedes_must_name_a_known_write():
    with pytest.raises(ValidationError, match="unknown id `v0`"):
        scenario(DATED.replace("supersedes: v1", "supersedes: v0"))


def test_a_thread_gives_exchanges_or_turns():
    bad = TRANSCRIPT.format(bulk="true").replace(
        "    turns:", "    exchanges: [{user: a, reply: b}]\n    turns:"
    )
    with pytest.raises(ValidationError, match="either `exchanges` or `turns`"):
        scenario(bad)


def test_probe_tags_and_evidence_reach_the_results():
    result = run(scenario(TRANSCRIPT.format(bulk="true")), NaiveEngine())
    probe = next(p for p in result.probes if p.phase is Phase.recall)
    assert probe.evidence == ["pick"] and probe.evidence_found == ["pick"]
    assert probe.evidence_rank is not None and probe.evidence_recalled is True
