"""`compare`'s paired bootstrap on numpy against its plain definition: for a seed, every
interval and verdict that the straightforward merge of the drawn cases' tallies gives."""

from __future__ import annotations

import time

from benchmarks.report_speed import synthetic_run
from memeval.report.compare import Verdict, _verdict, common_cases, compare, sums_over_results
from memeval.report.scorecard import by_case, card_of, card_values, strata
from memeval.report.stats import bootstrap, percentile_interval
from memeval.results import CaseResult, CaseStatus, RunReport
from memeval.scoring.kpis import merge, tally
from tests.report.test_resampling import with_lags

Pool = dict[str, list[CaseResult]]


def plain_compare(base: Pool, cand: Pool, sums: frozenset[str], resamples: int, seed: int):
    """The comparison as `stats.bootstrap` defines it: each resample's cases merged one by one,
    every sum divided by the passes its results make over the drawn cases."""
    tallies = {side: {i: tally(cases) for i, cases in pool.items()} for side, pool in
               (("base", base), ("cand", cand))}  # fmt: skip

    def scored(side: str, ids: list[str]) -> dict[str, float | None]:
        pool = base if side == "base" else cand
        passes = sum(len(pool[i]) for i in ids) / len(ids) if ids else 1.0
        return {
            name: v / passes if name in sums and v is not None and passes != 1.0 else v
            for name, v in card_values(merge(tallies[side][i] for i in ids)).items()
        }

    def deltas(ids: list[str]) -> dict[str, float | None]:
        b, a = scored("base", ids), scored("cand", ids)
        return {n: None if b[n] is None or a.get(n) is None else a[n] - b[n] for n in b}

    ids = sorted(base)
    layers = strata(c for cases in base.values() for c in cases)
    samples = bootstrap(layers, deltas, resamples=resamples, seed=seed)
    point = deltas(ids)
    left_out = [deltas([i for i in ids if i != out]) for out in ids]
    card = card_of(merge(tallies["base"][i] for i in ids))
    out = {}
    for k in card:
        delta = point.get(k.name)
        low, high = percentile_interval(samples.get(k.name, []) if delta is not None else [])
        steady = delta is not None and all(
            (d := row.get(k.name)) is not None and d * delta > 0 for row in left_out
        )
        out[k.name] = (delta, low, high, _verdict(k, delta, low, high, steady)[0])
    return out


def pools_of(reports: list[RunReport]) -> tuple[Pool, Pool, frozenset[str]]:
    """The two groups' pooled done results on the common cases, as `compare` takes them."""
    keep = set(common_cases(reports))
    by_label: dict[str, list[CaseResult]] = {}
    for r in reports:
        done = [c for c in r.cases if c.case_id in keep and c.status is CaseStatus.done]
        by_label.setdefault(r.label, []).extend(done)
    base, cand = (by_case(cases) for cases in by_label.values())
    return base, cand, sums_over_results([c for p in (base, cand) for v in p.values() for c in v])


def assert_same(reports: list[RunReport], resamples: int, seed: int) -> None:
    base, cand, sums = pools_of(reports)
    expected = plain_compare(base, cand, sums, resamples, seed)
    [got] = compare(reports, resamples=resamples, seed=seed).comparisons
    assert [m.name for m in got.moves] == list(expected)
    for move in got.moves:
        delta, low, high, verdict = expected[move.name]
        assert move.verdict is verdict, move.name
        for mine, theirs in ((move.delta, delta), (move.low, low), (move.high, high)):
            # The same draws; sums added in another order, nothing more.
            assert (mine is None) == (theirs is None), move.name
            assert mine is None or theirs is None or abs(mine - theirs) < 1e-9, move.name


def test_pooled_trials_with_spend_and_errors_give_the_plain_intervals():
    """Two trials pooled on one side (every sum per pass), errored cases, usage windows and
    write-to-ranked samples: every kind of KPI, resampled and left out one case at a time."""
    base = with_lags()
    cand = with_lags()
    for n, case in enumerate(cand.cases):
        case.run_id, case.beliefs_built = "c", 2 * n
        if n % 3 == 0 and case.probes:
            case.probes[0].hit = not case.probes[0].hit
    extra = cand.model_copy(update={"run_id": "c2", "cases": cand.cases[: len(cand.cases) // 2]})
    reports = [base, cand.model_copy(update={"run_id": "c", "label": "cand"}),
               extra.model_copy(update={"label": "cand"})]  # fmt: skip
    assert_same(reports, resamples=300, seed=7)


def test_a_synthetic_benchmark_comparison_gives_the_plain_intervals():
    a, b = synthetic_run(120, 240, seed=1), synthetic_run(120, 240, seed=2)
    a.label, b.label, b.run_id = "a", "b", "b"
    assert_same([a, b], resamples=400, seed=3)
    moves = compare([a, b], resamples=400, seed=3).comparisons[0].moves
    assert any(m.verdict is not Verdict.unmeasured and m.low != m.high for m in moves)


def test_comparing_5000_cases_takes_seconds_of_cpu():
    """Merging tallies case by case, for 2,000 resamples and 5,000 cases left out in turn,
    took minutes of CPU; the bound is loose for a loaded machine, tight enough that going
    back to it fails."""
    a, b = synthetic_run(5000, 10000, seed=1), synthetic_run(5000, 10000, seed=2)
    a.label, b.label, b.run_id = "a", "b", "b"
    cpu = time.process_time()
    [c] = compare([a, b]).comparisons
    cpu = time.process_time() - cpu
    pack_hit = next(m for m in c.moves if m.name == "pack_hit")
    assert pack_hit.low is not None and pack_hit.high is not None and pack_hit.low < pack_hit.high
    assert cpu < 30.0, f"{cpu:.1f} s of CPU to compare 5,000 cases"
