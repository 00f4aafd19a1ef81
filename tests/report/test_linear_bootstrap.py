"""The bootstrap adds up per-case tallies instead of rescoring every probe per resample: the
intervals must be those of rescoring the drawn cases from scratch, resample for resample."""

from __future__ import annotations

from memeval.engines.types import Usage
from memeval.report.intervals import run_intervals
from memeval.report.scorecard import by_case, card_values, scorecard, strata, values
from memeval.report.stats import bootstrap, percentile_interval
from memeval.results import CaseStatus, UsageWindow
from memeval.scoring.kpis import merge, tally
from tests.report.factory import make_report


def two_trials():
    good = make_report(label="t", run_id="r")
    worse = make_report(label="t", run_id="r", rates={"temporal": 0.4}, hit=0.6)
    for n, case in enumerate(worse.cases):
        case.trial = 1
        case.beliefs_built = n  # a sum KPI, so duplicates drawn must add
        if n % 7 == 0:
            case.status = CaseStatus.error  # spends, but scores nothing
        window = (100 * n, 100 * n + 150)  # overlapping usage windows
        case.engine_usage = UsageWindow(
            before=Usage(calls=window[0], usd_micros=window[0]),
            after=Usage(calls=window[1], usd_micros=window[1]),
        )
    return good.model_copy(update={"cases": good.cases + worse.cases})


def test_intervals_equal_rescoring_each_resample_from_its_cases():
    report = two_trials()
    groups = by_case(report.cases)

    def rescored(ids: list[str]) -> dict[str, float | None]:
        return values(scorecard([c for i in ids for c in groups[i]]))

    samples = bootstrap(strata(report.cases), rescored, resamples=300, seed=11)
    fast = run_intervals(report, resamples=300, seed=11).intervals
    assert fast["composite"].low < fast["composite"].high
    for k in scorecard(report.cases):
        low, high = percentile_interval(samples.get(k.name, []) if k.value is not None else [])
        got = fast[k.name]
        assert (got.value, got.n) == (k.value, k.n), k.name
        if got.cases < 2:  # measured on one case: no interval, never a zero-width one
            assert got.low is None and got.high is None, k.name
            continue
        for mine, theirs in ((got.low, low), (got.high, high)):
            assert (mine is None) == (theirs is None), k.name
            if mine is not None and theirs is not None:
                assert abs(mine - theirs) < 1e-9, k.name


def test_tallies_add_like_the_cases_they_hold():
    cases = two_trials().cases
    halves = cases[: len(cases) // 2], cases[len(cases) // 2 :]
    added = card_values(merge(tally(half) for half in halves))
    assert added == values(scorecard(cases))
    # A case drawn twice: its checks count twice, its usage window once.
    twice = card_values(merge([tally(cases), tally(cases[:1])]))
    assert twice == values(scorecard([*cases, cases[0]]))
    assert twice["engine_usd"] is not None
    assert twice["engine_usd"] == values(scorecard(cases))["engine_usd"]
