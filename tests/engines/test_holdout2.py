"""A second set of cases written apart from the reference engine, with paraphrased questions,
names one letter off stored ones, and records that carry no triple.

First scored, the engine reached 73.4% on these fixtures; its general fixes for what they
exposed (entity-first matching, a relatedness lexicon, predicate-aware hops) were made while
looking at them, so the thresholds below, what it reached then less a small margin, guard
against regressions and say nothing about unseen cases: `test_holdout3` does that.
"""

from __future__ import annotations

import pytest

from memeval.results import RunReport
from tests.engines.test_holdout import kpi, run


@pytest.fixture(scope="module")
def fixtures() -> dict[str, RunReport]:
    return {e: run(e, "holdout2_fixtures.yaml") for e in ("reference", "naive")}


@pytest.fixture(scope="module")
def scenarios() -> dict[str, RunReport]:
    return {e: run(e, "holdout2_scenario.yaml") for e in ("reference", "naive")}


def test_reference_on_the_second_unseen_fixtures(fixtures):
    ref = fixtures["reference"]
    assert ref.composite is not None and ref.composite >= 0.95, ref.dimensions
    for dim, score in ref.dimensions.items():
        assert score is not None and score >= 0.9, dim


def test_naive_stays_far_below_reference_on_the_composite(fixtures):
    ref, naive = fixtures["reference"], fixtures["naive"]
    assert naive.composite is not None and ref.composite is not None
    assert naive.composite <= 0.4 < ref.composite - 0.5


def test_reference_on_the_second_unseen_scenarios(scenarios):
    ref, naive = scenarios["reference"], scenarios["naive"]
    assert (kpi(ref, "pack_hit") or 0.0) >= 0.95
    assert kpi(ref, "fresh_first") == 1.0
    assert kpi(ref, "leaks") == 0.0
    assert (kpi(ref, "mrr") or 0.0) >= 0.48
    assert (kpi(naive, "mrr") or 0.0) < (kpi(ref, "mrr") or 0.0)
    assert (kpi(naive, "leaks") or 0.0) > 0.0
