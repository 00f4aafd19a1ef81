"""The numpy bootstrap against its plain definition: the same draws as `random.choices`, and
each resample's numbers those of merging the drawn cases' tallies; and what 5,000 cases cost."""

from __future__ import annotations

import random
import time

import numpy as np

from benchmarks.report_speed import synthetic_run
from memeval.engines.types import Usage
from memeval.report.intervals import run_intervals
from memeval.report.resampling import (
    counts,
    python_draws,
    resampled_values,
    union_length,
    weighted_percentiles,
)
from memeval.report.scorecard import by_case, card_values, strata
from memeval.report.stats import bootstrap
from memeval.results import LagResult, UsageWindow
from memeval.scoring.kpis import QUANTILES, merge, percentile, tally
from memeval.scoring.spend import usage_union
from tests.report.test_linear_bootstrap import two_trials


def test_draws_are_those_of_random_choices_across_blocks():
    sizes = [5, 1, 12, 3]
    rng = random.Random(11)
    # Blocks of three resamples, the last of one: the stream runs on across blocks.
    rows = np.concatenate(list(python_draws(sizes, 40, 11, 3)))
    assert rows.shape == (40, sum(sizes))
    for row in rows.tolist():
        offset, expected = 0, []
        for size in sizes:
            expected += [offset + i for i in rng.choices(range(size), k=size)]
            offset += size
        assert row == expected
    assert np.array_equal(counts(rows, sum(sizes)).sum(axis=1), np.full(40, sum(sizes)))


def with_lags():
    """Two trials with usage windows and errored cases, and write-to-ranked samples, so every
    kind of KPI is resampled: sums, percentiles of samples, and the union of windows."""
    report = two_trials()
    for n, case in enumerate(report.cases):
        case.lags = [LagResult(probe="p", write="w", ms=None if n % 5 == 0 else 3.0 * n + 1)]
    return report


def test_each_resample_equals_merging_the_drawn_tallies():
    report = with_lags()
    tallies = {i: tally(cases) for i, cases in by_case(report.cases).items()}
    layers = strata(report.cases)

    def merged(ids: list[str]) -> dict[str, float | None]:
        return card_values(merge(tallies[i] for i in ids))

    plain = bootstrap(layers, merged, resamples=120, seed=5)
    fast = resampled_values(layers, tallies, card_values, resamples=120, seed=5)
    assert set(fast) == set(plain)
    assert {"composite", "engine_usd", "usd_per_correct", *QUANTILES} <= set(fast)
    for name, samples in plain.items():
        assert len(fast[name]) == len(samples), name
        worst = max(abs(a - b) for a, b in zip(fast[name], samples, strict=True))
        assert worst < 1e-9, name  # sums of scores added in another order, nothing more
    assert len(set(fast["pre_turn_p95"])) > 1  # resamples that differ, not one value copied


def test_a_run_of_no_case_resamples_as_the_plain_bootstrap_does():
    """A run that stored no case (an interrupted one, an empty selection) still gets reports."""

    def merged(ids: list[str]) -> dict[str, float | None]:
        return card_values(merge([]))

    plain = bootstrap({}, merged, resamples=30, seed=5)
    assert resampled_values({}, {}, card_values, resamples=30, seed=5) == plain


def test_weighted_percentiles_are_percentiles_of_the_expanded_samples():
    rng = random.Random(3)
    samples = [tuple(rng.uniform(0, 50) for _ in range(rng.randint(0, 4))) for _ in range(9)]
    weights = np.array([[rng.choice([0, 0, 1, 2, 3]) for _ in samples] for _ in range(60)])
    found = weighted_percentiles(samples, weights.astype(np.int32), [50, 95, 99])
    for q, (got, n) in zip([50, 95, 99], found, strict=True):
        for row, value, size in zip(weights.tolist(), got.tolist(), n.tolist(), strict=True):
            expanded = [v for s, w in zip(samples, row, strict=True) for v in s * w]
            assert size == len(expanded)
            assert (None if np.isnan(value) else value) == percentile(expanded, q)


def test_union_length_is_the_spend_of_the_drawn_windows():
    rng = random.Random(4)
    windows = []
    for _ in range(12):
        before = rng.randint(0, 100)
        after = before + rng.randint(-5, 40)  # a counter that went back counts nothing
        windows.append(UsageWindow(before=Usage(usd_micros=before), after=Usage(usd_micros=after)))
    spans = np.array(
        [[w.before.usd_micros, max(w.before.usd_micros, w.after.usd_micros)] for w in windows]
    )
    drawn = np.array([[rng.random() < 0.4 for _ in windows] for _ in range(80)])
    for row, got in zip(drawn.tolist(), union_length(spans, drawn).tolist(), strict=True):
        spend = usage_union([w for w, d in zip(windows, row, strict=True) if d])
        assert got == (0 if spend is None else spend.usd_micros)


def test_intervals_of_5000_cases_take_seconds_of_cpu():
    """Merging tallies case by case took some 40 s of CPU here; the bound is loose for a
    loaded machine, tight enough that going back to it fails."""
    report = synthetic_run(5000, 10000)
    cpu = time.process_time()
    ci = run_intervals(report)
    cpu = time.process_time() - cpu
    interval = ci.intervals["pack_hit"]
    assert interval.low is not None and interval.high is not None
    assert interval.low < interval.value < interval.high
    assert cpu < 12.0, f"{cpu:.1f} s of CPU for the intervals of 5,000 cases"
