"""The statistics behind intervals and verdicts, against values worked out by hand."""

from __future__ import annotations

import pytest

from memeval.report.stats import bootstrap, mcnemar, percentile_interval, quantile, spread


def test_mcnemar_is_the_exact_two_sided_binomial_on_discordant_pairs():
    assert mcnemar(0, 0) == 1.0
    assert mcnemar(0, 1) == 1.0  # one flip can never be significant
    assert mcnemar(0, 6) == pytest.approx(2 / 64)
    # Past 1,023 flips 2**n is no float: a large comparison still gets its p-value.
    assert mcnemar(600, 1400) < 1e-60 and mcnemar(1000, 1001) == pytest.approx(1.0)
    assert mcnemar(6, 0) == mcnemar(0, 6)
    assert mcnemar(2, 8) == pytest.approx(2 * (1 + 10 + 45) / 1024)


def test_mcnemar_handles_many_pairs_without_underflow():
    assert 0.0 < mcnemar(400, 600) < 1e-9


def test_quantile_interpolates_between_order_statistics():
    assert quantile([0.0, 10.0], 0.25) == 2.5
    assert quantile([3.0], 0.9) == 3.0
    assert percentile_interval([]) == (None, None)


def test_bootstrap_is_seeded_and_resamples_within_strata():
    strata = {"a": [1.0, 2.0, 3.0], "b": [10.0]}

    def stat(drawn):
        return {"sum_b": sum(x for x in drawn if x >= 10), "n": float(len(drawn))}

    first = bootstrap(strata, stat, resamples=50, seed=3)
    assert first == bootstrap(strata, stat, resamples=50, seed=3)
    assert set(first["n"]) == {4.0}  # every resample keeps each stratum's size
    assert set(first["sum_b"]) == {10.0}


def test_spread_reports_sample_sd_and_range():
    s = spread([0.5, 0.7, 0.6])
    assert (s.mean, s.low, s.high, s.n) == (pytest.approx(0.6), 0.5, 0.7, 3)
    assert s.sd == pytest.approx(0.1)
    assert spread([0.4]).sd == 0.0
