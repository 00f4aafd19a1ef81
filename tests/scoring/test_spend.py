"""A run's engine cost is the union of its cases' usage windows, never the sum of deltas."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memeval.engines.types import Usage
from memeval.results import CaseResult, CaseStatus, UsageWindow
from memeval.scoring.kpis import kpis
from memeval.scoring.spend import engine_spend


def case(name: str, window: tuple[int, int] | None) -> CaseResult:
    usage = None
    if window is not None:
        low, high = window
        usage = UsageWindow(
            before=Usage(calls=low, tokens=10 * low, usd_micros=100 * low),
            after=Usage(calls=high, tokens=10 * high, usd_micros=100 * high),
        )
    return CaseResult(
        run_id="r",
        case_id=name,
        kind="fixture",
        engine="e",
        tenant="t",
        status=CaseStatus.done,
        engine_usage=usage,
    )


def test_overlapping_windows_count_once_and_gaps_not_at_all() -> None:
    # Two cases overlap on calls 10..14; the resumed third starts after others spent 20..40.
    cases = [case("a", (10, 14)), case("b", (12, 20)), case("c", (40, 45))]
    spent = engine_spend(cases)
    assert spent == Usage(calls=15, tokens=150, usd_micros=1500)
    assert sum((c.engine_usage.after.calls - c.engine_usage.before.calls) for c in cases) == 17


def test_an_engine_without_usage_reports_none_not_zero() -> None:
    cases = [case("a", None), case("b", None)]
    assert engine_spend(cases) is None
    cost = {k.name: k.value for k in kpis(cases) if k.group == "cost"}
    assert cost["engine_usd"] is None
    assert cost["answerer_usd"] == 0.0


def test_the_cost_kpi_reads_the_union() -> None:
    cost = {k.name: k.value for k in kpis([case("a", (0, 30)), case("b", (10, 20))])}
    assert cost["engine_usd"] == 0.003  # 30 calls at 100 micro-USD


@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 200)), min_size=1, max_size=30))
def test_the_union_is_bounded_by_the_extremes_and_by_the_sum(spans) -> None:
    windows = [(low, low + width) for low, width in spans]
    spent = engine_spend([case(str(i), w) for i, w in enumerate(windows)])
    assert spent is not None
    assert max(h - lo for lo, h in windows) <= spent.calls
    assert spent.calls <= min(
        sum(h - lo for lo, h in windows), max(h for _, h in windows) - min(lo for lo, _ in windows)
    )
