"""The fixture checks of format v2: any_of, answer scope, exact and forbidden sources, match
options, acceptable conflicts. Each is scored on hand-made results (what a capable engine
returns) and run end to end on the naive engine, which lacks the capability and must fail."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from memeval.engines.naive import NaiveEngine
from memeval.engines.types import Capability, ConflictReport, Hit, QueryResult
from memeval.results import CheckStatus
from memeval.scoring.checks import acceptable, score_check
from memeval.scoring.kpis import kpis
from memeval.suites.fixture import Check
from tests.format.helpers import case, run

ALL = frozenset(Capability)
OFFICIAL = Hit(
    text="Refunds settle in 10 business days.",
    source="finance-ledger",
    sources=["finance-ledger", "audit-report"],
)
BLOG = Hit(text="Refunds settle in 9 days, says a blog.", source="random-blog")


def status(data: dict, result: QueryResult, caps: frozenset[Capability] = ALL) -> CheckStatus:
    return score_check(0, Check.model_validate(data), result, [], caps).status


def test_any_of_passes_when_one_alternative_does():
    both = {"any_of": [{"abstain": True}, {"contains": "10 business days"}]}
    assert status(both, QueryResult(hits=[OFFICIAL])) is CheckStatus.passed
    assert status(both, QueryResult()) is CheckStatus.passed
    assert status(both, QueryResult(hits=[BLOG])) is CheckStatus.failed


def test_any_of_is_unsupported_only_when_every_alternative_is():
    alternatives = {"any_of": [{"abstain": True}, {"source": "finance-ledger"}]}
    bare = frozenset({Capability.store})
    assert status(alternatives, QueryResult(hits=[OFFICIAL]), bare) is CheckStatus.unsupported
    mixed = {"any_of": [{"abstain": True}, {"contains": "nothing like it"}]}
    assert status(mixed, QueryResult(hits=[OFFICIAL]), bare) is CheckStatus.failed


def test_not_contains_scoped_to_the_answer_ignores_what_an_abstainer_lists():
    check = {"not_contains": "9 days", "scope": "answer"}
    abstaining = QueryResult(hits=[BLOG], abstained=True)
    assert status(check, abstaining) is CheckStatus.passed
    assert status({"not_contains": "9 days"}, abstaining) is CheckStatus.failed
    assert status(check, QueryResult(hits=[BLOG])) is CheckStatus.failed
    assert status(check, QueryResult(hits=[OFFICIAL, BLOG])) is CheckStatus.passed
    said = QueryResult(hits=[BLOG], abstained=True, answer="maybe 9 days")
    assert status(check, said) is CheckStatus.failed


def test_sources_must_be_exactly_the_set():
    exact = {"sources": ["finance-ledger", "audit-report"]}
    assert status(exact, QueryResult(hits=[OFFICIAL])) is CheckStatus.passed
    assert (
        status(
            exact,
            QueryResult(hits=[OFFICIAL, BLOG]),
        )
        is CheckStatus.passed
    )
    assert status(exact | {"within": 2}, QueryResult(hits=[OFFICIAL, BLOG])) is (CheckStatus.failed)
    only_one = {"sources": ["finance-ledger", "audit-report", "board-minutes"]}
    assert status(only_one, QueryResult(hits=[OFFICIAL])) is CheckStatus.failed


def test_not_source_forbids_a_source_among_the_leading_hits():
    assert status({"not_source": "random-blog"}, QueryResult(hits=[OFFICIAL])) is (
        CheckStatus.passed
    )
    two = QueryResult(hits=[OFFICIAL, BLOG])
    assert status({"not_source": "random-blog", "within": 2}, two) is CheckStatus.failed


def test_match_applies_to_every_check():
    price = QueryResult(hits=[Hit(text="The Team plan is £95 a seat.", source="pricing v0.4.1")])
    assert status({"contains": "£9"}, price) is CheckStatus.passed
    assert status({"contains": "£9", "match": "number"}, price) is CheckStatus.failed
    assert status({"not_contains": "£9", "match": "number"}, price) is CheckStatus.passed
    assert status({"source": "4.1", "match": "number"}, price) is CheckStatus.failed
    assert status({"source": "0.4.1", "match": "number"}, price) is CheckStatus.passed


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"any_of": [{"abstain": True}]}, "two or more checks"),
        ({"source": "x", "scope": "answer"}, "`scope` applies to"),
        ({"sources": []}, "exact sources"),
        ({"contains": "x", "match": "fuzzy"}, "match"),
        ({"contains": "x", "abstain": True}, "exactly one kind"),
    ],
)
def test_bad_checks_say_what_to_fix(data: dict, message: str):
    with pytest.raises(ValidationError) as caught:
        Check.model_validate(data)
    assert message in str(caught.value)


def test_acceptable_conflicts_need_two_ids_of_one_set():
    reported = [ConflictReport(ids=["a", "b"]), ConflictReport(ids=["a", "c"])]
    assert acceptable(reported, [["a", "b", "d"]]) == 1
    assert acceptable(reported, [["a"], ["b", "c"]]) == 0


PROVENANCE_FIXTURE = """
kind: fixture
dimension: provenance
name: low_trust_blog
title: A blog does not corroborate a ledger
tests: corroboration
assertions:
  - {id: ledger, text: Refunds settle in 10 business days., source: finance-ledger, trust: system}
  - {id: audit, text: The audit confirms refunds settle in 10 business days., source: audit-report}
  - {id: blog, text: A blog claims refunds settle in 9 days., source: random-blog, trust: agent}
queries:
  - text: How long do refunds take to settle?
    checks:
      - sources: [finance-ledger, audit-report]
        within: 2
      - not_source: random-blog
        within: 3
      - any_of: [{abstain: true}, {contains: "10 business days", scope: answer}]
      - not_contains: "9 days"
        scope: answer
"""


def test_naive_fails_the_new_provenance_and_answer_checks():
    fixture = case(PROVENANCE_FIXTURE)
    result = run(fixture, NaiveEngine())
    by_kind = {c.kind: c for c in result.checks}
    assert by_kind["sources"].status is CheckStatus.unsupported
    assert by_kind["not_source"].status is CheckStatus.unsupported
    # the keyword baseline never abstains and answers with its first hit, the newest of the
    # equally worded three: the blog's "9 days"
    assert result.queries[0].hits[0].startswith("A blog claims")
    assert by_kind["any_of"].status is CheckStatus.failed
    assert by_kind["not_contains"].status is CheckStatus.failed
    assert result.score == 0.0


def test_spurious_conflicts_skip_the_acceptable_ones():
    fixture = case(
        """
kind: fixture
dimension: conflict
name: acceptable
title: Two estimates a careful reader may flag
tests: acceptable_conflict
assertions:
  - {id: est1, text: The move takes three weeks by the vendor's estimate., source: vendor}
  - {id: est2, text: The move takes four weeks by our estimate., source: pm}
queries:
  - text: How long does the move take?
    acceptable_conflicts: [[est1, est2]]
    checks: [{contains: weeks}]
"""
    )

    class Flags(NaiveEngine):
        # It reports conflicts, so it says so: `spurious` is n/a for engines that cannot.
        capabilities = NaiveEngine.capabilities | {Capability.conflicts}

        async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
            found = await super().query(tenant, text, k)
            found.conflicts = [ConflictReport(ids=["est1", "est2"])]
            return found

    flagged = run(fixture, Flags())
    assert flagged.queries[0].conflicts == 1 and flagged.queries[0].acceptable_conflicts == 1
    spurious = next(k for k in kpis([flagged]) if k.name == "spurious")
    assert spurious.value == 0.0 and spurious.n == 1
    strict = fixture.model_copy(
        update={
            "queries": [q.model_copy(update={"acceptable_conflicts": []}) for q in fixture.queries]
        }
    )
    raised = run(strict, Flags())
    assert next(k for k in kpis([raised]) if k.name == "spurious").value == 1.0
