"""How sure a run's numbers are: a bootstrap interval over cases, and the spread across trials.

A suite of a few dozen probes moves several points when one probe flips; an interval says so
in the report itself instead of leaving it to a reader's intuition.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from memeval.report.scorecard import by_case, card_values, scorecard, strata, values
from memeval.report.stats import (
    RESAMPLES,
    SEED,
    Interval,
    Spread,
    bootstrap,
    percentile_interval,
    spread,
)
from memeval.results import CaseResult, RunReport
from memeval.scoring.kpis import merge, tally


class RunIntervals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    resamples: int
    intervals: dict[str, Interval] = Field(description="Per scorecard name: composite, ...")
    trials: dict[str, Spread] = Field(
        default_factory=dict, description="Per scorecard name, across trials; empty with one."
    )


def run_intervals(
    report: RunReport, *, resamples: int = RESAMPLES, seed: int = SEED
) -> RunIntervals:
    cases = report.cases
    # Each case (its trials together) is tallied once; a resample adds up tallies.
    tallies = {case_id: tally(results) for case_id, results in by_case(cases).items()}
    point = scorecard(cases)

    def statistic(ids: list[str]) -> dict[str, float | None]:
        return card_values(merge(tallies[i] for i in ids))

    samples = bootstrap(strata(cases), statistic, resamples=resamples, seed=seed)
    intervals = {}
    for k in point:
        low, high = percentile_interval(samples.get(k.name, []) if k.value is not None else [])
        intervals[k.name] = Interval(value=k.value, low=low, high=high, n=k.n)
    return RunIntervals(resamples=resamples, intervals=intervals, trials=trial_spread(cases))


def trial_spread(cases: list[CaseResult]) -> dict[str, Spread]:
    """Each trial scored on its own; the spread says how much a rerun alone moves a number."""
    trials = sorted({c.trial for c in cases})
    if len(trials) < 2:
        return {}
    per_trial = [values(scorecard([c for c in cases if c.trial == t])) for t in trials]
    out = {}
    for name in per_trial[0]:
        seen = [v for row in per_trial if (v := row.get(name)) is not None]
        if len(seen) > 1:
            out[name] = spread(seen)
    return out
