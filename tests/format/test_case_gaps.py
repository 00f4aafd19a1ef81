"""What an outside author could not write before, each with an engine (or a result) lacking the
behaviour that fails it: `all_of` inside `any_of`, an order between two hits, a source among
the top N, a `match` per expected string, a stale value read as a claim, an abstain probe
passable without a model, and `as_of` on a lifecycle probe."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from memeval.engines.full_context import Entry, FullContextEngine
from memeval.engines.naive import NaiveEngine
from memeval.engines.types import Capability, Hit, Pack, QueryResult, TurnContext
from memeval.results import CheckStatus
from memeval.scoring.checks import score_check
from memeval.scoring.pack import grade_answer
from memeval.suites.fixture import Check, Query
from memeval.suites.scenario import Probe
from tests.format.helpers import run, scenario, scored_probe

EVERYTHING = frozenset(Capability)


def check(data: dict) -> Check:
    return Check.model_validate(data)


def status(c: Check, *hits: Hit, answer: str | None = None) -> CheckStatus:
    result = QueryResult(hits=list(hits), answer=answer)
    return score_check(0, c, result, [], EVERYTHING).status


def test_abstain_or_give_both_values():
    either = check(
        {
            "any_of": [
                {"abstain": True},
                {
                    "all_of": [
                        {"contains": "Lisbon", "within": 3},
                        {"contains": "Porto", "within": 3},
                    ]
                },
            ]
        }
    )
    assert status(either) is CheckStatus.passed  # abstained
    both = (Hit(text="The offsite was in Lisbon."), Hit(text="It moved to Porto."))
    assert status(either, *both) is CheckStatus.passed
    assert status(either, both[1]) is CheckStatus.failed  # one value alone is neither
    with pytest.raises(ValidationError, match="two or more"):
        check({"all_of": [{"contains": "x"}]})
    query = Query.model_validate({"text": "Where?", "checks": [either.model_dump()]})
    from memeval.llm.grading import grade_query

    assert grade_query("Lisbon, later Porto", query) and grade_query("unknown", query)
    assert not grade_query("Porto", query)


def test_an_order_between_two_hits():
    order = check({"before": ["runbook v2", "runbook v1"]})
    new, old = Hit(text="See runbook v2 for restarts."), Hit(text="runbook v1 is archived.")
    assert status(order, new, old) is CheckStatus.passed
    assert status(order, new) is CheckStatus.passed
    assert status(order, old, new) is CheckStatus.failed
    assert status(order, old) is CheckStatus.failed
    assert order.label == "runbook v2 before runbook v1"
    with pytest.raises(ValidationError, match="two strings"):
        check({"before": ["only one"]})


def test_a_source_among_the_top_n():
    among = check({"source": "ledger", "within": 3})
    filler = [Hit(text=f"note {n}", source="wiki") for n in range(3)]
    cited = Hit(text="refunds take 10 days", source="ledger")
    assert status(among, *filler[:2], cited) is CheckStatus.passed
    assert status(among, *filler, cited) is CheckStatus.failed  # fourth: out of the top 3


def test_a_match_mode_per_expected_string():
    probe = Probe(
        id="v",
        question="Which version and editor?",
        style="lexical",
        expect=["4.1", "Helix"],
        matches={"4.1": "number"},
    )
    assert scored_probe(probe, "# P\n\n- version 4.1 with Helix\n").hit
    assert not scored_probe(probe, "# P\n\n- version 0.4.1 with Helix\n").hit
    plain = probe.model_copy(update={"matches": {}})
    assert scored_probe(plain, "# P\n\n- version 0.4.1 with Helix\n").hit  # substring is fooled
    with pytest.raises(ValidationError, match="matches"):
        Probe(id="x", question="q?", style="lexical", expect=["a"], matches={"b": "word"})


def test_a_stale_value_read_as_a_claim():
    probe = Probe(
        id="e",
        question="Which editor does Dana use?",
        style="lexical",
        expect=["Helix"],
        stale=["vim"],
        stale_as="claim",
    )
    outdated = "# P\n\n- Dana no longer uses vim.\n- Dana uses Helix.\n"
    assert scored_probe(probe, outdated).fresh_first is True
    assert grade_answer("Helix; she no longer uses vim", probe)
    as_string = probe.model_copy(update={"stale_as": "string"})
    assert scored_probe(as_string, outdated).stale_first is True
    current = "# P\n\n- Dana uses vim.\n- Dana uses Helix.\n"
    assert scored_probe(probe, current).stale_first is True  # presented as current: stale


def test_an_abstain_probe_passes_without_a_model_when_no_wrong_answer_is_recalled():
    probe = Probe(
        id="pet",
        question="What is Dana's cat called?",
        style="lexical",
        abstain=True,
        forbidden=["Rex"],
        abstain_by="no_forbidden",
    )
    assert scored_probe(probe, "# P\n\n- Dana owns a dog called Rex.\n").hit is False
    assert scored_probe(probe, "# P\n\n- Dana likes hiking.\n").hit is True
    default = probe.model_copy(update={"abstain_by": "empty"})
    assert scored_probe(default, "# P\n\n- Dana likes hiking.\n").hit is False
    with pytest.raises(ValidationError, match="abstain_by"):
        Probe(id="x", question="q?", style="lexical", expect=["a"], abstain_by="no_forbidden")


AS_OF = """
kind: scenario
name: offsite-moved
title: The offsite moved city
start: 2026-03-02
documents:
  - {id: d1, title: Offsite, text: The team offsite city is Lisbon., day: 0}
  - {id: d2, title: Offsite, text: The team offsite city is Porto., day: 10}
probes:
  - id: then
    question: Which city is the team offsite in?
    style: lexical
    expect: [Lisbon]
    stale: [Porto]
    as_of: 2026-03-05T12:00:00Z
"""


class AsOfEngine(FullContextEngine):
    """Recalls only what was written by the moment the question is asked."""

    name = "as-of"

    def __init__(self) -> None:
        super().__init__()
        self.asked = None

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        self.asked = ctx.turn.at
        return await super().pre_turn(tenant, ctx)

    def selected(self, tenant: str) -> list[Entry]:
        return [e for e in super().selected(tenant) if e.at is None or e.at <= self.asked]


def test_as_of_on_a_lifecycle_probe():
    case = scenario(AS_OF)
    timely = run(case, AsOfEngine())
    assert len(timely.probes) == 2  # recall and synthesis
    assert all(p.fresh_first is True and p.hit for p in timely.probes)
    blind = run(case, NaiveEngine())  # ignores when it is asked: the newer value comes first
    assert blind.probes and all(p.stale_first and not p.fresh_first for p in blind.probes)
