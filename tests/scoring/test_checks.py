"""Fixture checks against hand-made query results."""

from __future__ import annotations

from memeval.engines.types import Capability, ConflictReport, Hit, HitSpan, QueryResult
from memeval.results import CheckStatus
from memeval.scoring.checks import score_check
from memeval.suites.fixture import Check

ALL = frozenset(Capability)
RESULT = QueryResult(
    hits=[
        Hit(
            text="The churn rate for Q3 is 4.2%.",
            source="analytics-dashboard",
            span=HitSpan(start=0, end=12, text="churn rate 4.2%"),
            sources=["analytics-dashboard", "finance-weekly"],
        ),
        Hit(text="Slack says churn is 6%.", source="slack"),
    ],
    answer="4.2%",
    conflicts=[ConflictReport(ids=["a1", "a2", "a3"])],
)


def check(data) -> Check:
    return Check.model_validate(data)


def status(data, result=RESULT, conflicts=(), caps=ALL) -> CheckStatus:
    return score_check(0, check(data), result, list(conflicts), caps).status


def test_contains_looks_at_answer_and_first_hit_only():
    assert status({"contains": "4.2%"}) is CheckStatus.passed
    assert status({"contains": "6%"}) is CheckStatus.failed
    assert status({"contains": "6%", "within": 2}) is CheckStatus.passed


def test_contains_fails_when_abstaining():
    abstained = QueryResult(hits=RESULT.hits, abstained=True)
    assert status({"contains": "4.2%"}, abstained) is CheckStatus.failed


def test_not_contains_scans_every_hit():
    assert status({"not_contains": "6%"}) is CheckStatus.failed
    assert status({"not_contains": "9%"}) is CheckStatus.passed


def test_not_first():
    assert status({"not_first": "6%"}) is CheckStatus.passed
    assert status({"not_first": "churn rate"}) is CheckStatus.failed
    assert status({"not_first": "4.2"}, QueryResult()) is CheckStatus.passed


def test_abstain():
    assert status({"abstain": True}) is CheckStatus.failed
    assert status({"abstain": True}, QueryResult()) is CheckStatus.passed
    assert status({"abstain": True}, QueryResult(hits=RESULT.hits, abstained=True)) is (
        CheckStatus.passed
    )


def test_conflict_needs_every_id_from_result_or_lookup():
    assert status({"conflict": ["a1", "a3"]}) is CheckStatus.passed
    assert status({"conflict": ["a1", "a9"]}) is CheckStatus.failed
    looked_up = [ConflictReport(ids=["a9", "a1"])]
    assert status({"conflict": ["a1", "a9"]}, conflicts=looked_up) is CheckStatus.passed


def test_source_counts_corroborating_sources():
    assert status({"source": "analytics"}) is CheckStatus.passed
    assert status({"source": "finance-weekly"}) is CheckStatus.passed
    assert status({"source": "slack"}) is CheckStatus.failed
    assert status({"source": "slack", "within": 2}) is CheckStatus.passed


def test_span_text():
    assert status({"span": "rate 4.2"}) is CheckStatus.passed
    assert status({"span": "Q3"}) is CheckStatus.failed


def test_missing_capability_is_unsupported_not_failed():
    caps = frozenset({Capability.store})
    assert status({"abstain": True}, QueryResult(), caps=caps) is CheckStatus.unsupported
    assert status({"conflict": ["a1", "a3"]}, caps=caps) is CheckStatus.unsupported
    assert status({"source": "analytics"}, caps=caps) is CheckStatus.unsupported
    assert status({"span": "rate"}, caps=caps) is CheckStatus.unsupported
    result = score_check(0, check({"span": "rate"}), RESULT, [], caps)
    assert not result.ok and "spans" in result.detail
