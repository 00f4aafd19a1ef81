"""CI gates for `memeval run`: fail the build on a low composite or on a real regression.

Exit codes (besides 1, any memeval error, and 2, a usage error):

- 3: the composite is below `--fail-under`, or there is no composite to judge;
- 4: the run is worse than `--fail-on-regression BASELINE` on the composite, a dimension or a
  quality KPI, by the same noise-aware test as `memeval compare` (latency and cost never gate).

When both gates fail the exit code is 4, and the message names both.
"""

from __future__ import annotations

from memeval.errors import GateFailed
from memeval.report.compare import Comparison, GroupBy, Verdict, compare
from memeval.report.numbers import pct
from memeval.report.stats import RESAMPLES
from memeval.results import RunReport

EXIT_BELOW_THRESHOLD = 3
EXIT_REGRESSION = 4


def below_threshold(
    report: RunReport, threshold: float, option: str = "--fail-under"
) -> str | None:
    """Why the run fails `option` (the pytest plugin's is `--memeval-fail-under`), or None
    when it passes."""
    if report.composite is None:
        return f"no composite to hold to {option} {pct(threshold)}: no dimension fixture ran"
    if report.composite < threshold:
        return f"composite {pct(report.composite)} is below {option} {pct(threshold)}"
    return None


def against(report: RunReport, baseline: RunReport, *, resamples: int = RESAMPLES) -> Comparison:
    """The run compared with its baseline on the cases both finished."""
    result = compare(
        [baseline, report], baseline=baseline.run_id, by=GroupBy.run, resamples=resamples
    )
    return result.comparisons[0]


def enforce_gates(
    report: RunReport,
    *,
    fail_under: float | None = None,
    baseline: RunReport | None = None,
    resamples: int = RESAMPLES,
) -> list[str]:
    """Raises `GateFailed` (exit 3 or 4) when a gate fails; else says what passed."""
    passed, failed, code = [], [], 0
    if fail_under is not None:
        why = below_threshold(report, fail_under)
        if why is None:
            passed.append(f"composite {pct(report.composite)} ≥ --fail-under {pct(fail_under)}")
        else:
            failed.append(why)
            code = EXIT_BELOW_THRESHOLD
    if baseline is not None:
        comparison = against(report, baseline, resamples=resamples)
        if comparison.moved(Verdict.worse):
            failed.append(f"regression: {comparison.headline}")
            code = EXIT_REGRESSION
        else:
            passed.append(f"no regression: {comparison.headline}")
    if failed:
        raise GateFailed(
            "; ".join(failed), exit_code=code, fix="see report.md for the misses behind it"
        )
    return passed
