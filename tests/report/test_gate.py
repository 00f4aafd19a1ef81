"""The CI gates `memeval run` uses: exit 3 below --fail-under, exit 4 on a regression."""

from __future__ import annotations

import pytest

from memeval.errors import GateFailed
from memeval.report.gate import EXIT_BELOW_THRESHOLD, EXIT_REGRESSION, enforce_gates
from tests.report.factory import make_report

FAST = 300


def test_fail_under_passes_at_or_above_the_threshold(reference_run):
    passed = enforce_gates(reference_run, fail_under=reference_run.composite)
    assert passed == [
        f"composite {100 * reference_run.composite:.1f}% ≥ --fail-under "
        f"{100 * reference_run.composite:.1f}%"
    ]
    assert enforce_gates(reference_run) == []


def test_fail_under_exits_3_below_the_threshold(reference_run):
    with pytest.raises(GateFailed) as err:
        enforce_gates(reference_run, fail_under=0.95)
    assert err.value.exit_code == EXIT_BELOW_THRESHOLD == 3
    assert "is below --fail-under 95.0%" in err.value.message


def test_fail_under_exits_3_when_there_is_no_composite():
    lifecycle_only = make_report(label="l", fixtures=0)
    with pytest.raises(GateFailed) as err:
        enforce_gates(lifecycle_only, fail_under=0.1)
    assert err.value.exit_code == 3
    assert "no dimension fixture ran" in err.value.message


def test_fail_on_regression_passes_a_rerun(reference_run, reference_rerun):
    passed = enforce_gates(reference_rerun, baseline=reference_run, resamples=FAST)
    assert passed == ["no regression: run-reference-again-2 vs run-reference-1: within noise"]


def test_fail_on_regression_exits_4_and_names_what_regressed(reference_run, naive_run):
    with pytest.raises(GateFailed) as err:
        enforce_gates(naive_run, baseline=reference_run, fail_under=0.95, resamples=FAST)
    assert err.value.exit_code == EXIT_REGRESSION == 4
    assert "is below --fail-under" in err.value.message  # both gates are named
    assert "clear regression — worse on composite; dimensions temporal" in err.value.message
