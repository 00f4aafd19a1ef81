"""How sure a run's numbers are: a bootstrap interval over cases, and the spread across trials.

A suite of a few dozen probes moves several points when one probe flips; an interval says so
in the report itself instead of leaving it to a reader's intuition.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, ConfigDict, Field

from memeval.report.resampling import resampled_values
from memeval.report.scorecard import (
    COMPOSITE,
    PACK_HIT,
    card_of,
    card_records,
    card_values,
    scorecard,
    strata,
    values,
)
from memeval.report.stats import RESAMPLES, SEED, Interval, Spread, percentile_interval, spread
from memeval.results import CaseResult, RunReport
from memeval.scoring.kpis import Tally, merge

EVIDENCE = "evidence_recall"


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
    # Each case is tallied once: the run's point values add up those tallies in the run's
    # order, as `scorecard` does, and a resample adds up each drawn case's (its trials).
    each = [Tally.of(c) for c in cases]
    point = card_of(merge(each))
    grouped: dict[str, list[Tally]] = defaultdict(list)
    for case, t in zip(cases, each, strict=True):
        grouped[case.case_id].append(t)
    tallies = {case_id: merge(ts) for case_id, ts in grouped.items()}
    layers = strata(cases)
    samples = resampled_values(layers, tallies, card_values, resamples=resamples, seed=seed)
    behind: dict[str, set[str]] = defaultdict(set)
    for case_id, t in tallies.items():
        for r in card_records(t):
            if r[3]:
                behind[r[1]].add(case_id)
    intervals = {}
    for k in point:
        # Cases resample within their stratum: a number whose every stratum holds one case
        # of it is drawn the same every time, a zero-width interval that would read as
        # certainty. It has no interval.
        drawn = k.value is not None and any(
            len(behind[k.name].intersection(ids)) > 1 for ids in layers.values()
        )
        low, high = percentile_interval(samples.get(k.name, []) if drawn else [])
        intervals[k.name] = Interval(
            value=k.value, low=low, high=high, n=k.n, cases=len(behind[k.name])
        )
    return RunIntervals(resamples=resamples, intervals=intervals, trials=trial_spread(cases))


def headline_titles(
    ci_: RunIntervals, composite: str, partial: bool = False, *, benchmark: bool = False
) -> list[tuple[str, str]]:
    """(name, title) of the numbers a report leads with: the composite, then, for a benchmark
    read at run time (`locomo:PATH`), its evidence recall, which is what the benchmark
    measures, one per question; else pack hit over both phases. Only those the run measured."""
    mark = " (partial)" if partial else ""
    evidence = benchmark and _measured(ci_, EVIDENCE)
    second = (EVIDENCE, "evidence recall") if evidence else (PACK_HIT, "pack hit")
    titles = [(COMPOSITE, composite), (second[0], second[1] + mark)]
    return [(name, title) for name, title in titles if _measured(ci_, name)]


def _measured(ci_: RunIntervals, name: str) -> bool:
    interval = ci_.intervals.get(name)
    return interval is not None and interval.value is not None


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
