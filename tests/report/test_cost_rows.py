"""The cost table tallies each case once and says what tallying each part, and the whole
suite again, said."""

from __future__ import annotations

import pytest

from memeval.report.numbers import unpriced
from memeval.report.tables import ALL, CostRow, cost_rows
from memeval.results import CaseResult
from memeval.scoring import kpis as kpis_module
from memeval.scoring.kpis import Tally, kpis
from tests.report.test_resampling import with_lags


def plain_rows(cases: list[CaseResult]) -> list[CostRow]:
    groups = sorted({c.dimension or c.kind for c in cases})
    parts = [(g, [c for c in cases if (c.dimension or c.kind) == g]) for g in groups]
    rows = []
    for group, part in [*parts, (ALL, cases)]:
        measured = {k.name: k for k in kpis(part)}
        priced = "usd_per_correct" not in unpriced({n: k.value for n, k in measured.items()})
        rows.append(
            CostRow(
                group=group,
                engine_usd=measured["engine_usd"].value or 0.0,
                answerer_usd=measured["answerer_usd"].value or 0.0,
                correct=measured["usd_per_correct"].n,
                usd_per_correct=measured["usd_per_correct"].value if priced else None,
            )
        )
    return rows


def priced_cases() -> list[CaseResult]:
    cases = with_lags().cases
    for n, case in enumerate(cases):
        case.answerer_usd_micros = 1000 * (n % 4)
    return cases


def test_cost_rows_are_those_of_tallying_each_part_and_the_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cases = priced_cases()
    expected = plain_rows(cases)
    tallied: list[str] = []
    of = Tally.of.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Tally], case: CaseResult) -> Tally:
        tallied.append(case.case_id)
        return of(cls, case)  # type: ignore[no-any-return]

    monkeypatch.setattr(kpis_module.Tally, "of", classmethod(counted))
    rows = cost_rows(cases)
    assert len(tallied) == len(cases)  # once a case, not once more for the whole suite
    assert [r.group for r in rows] == [r.group for r in expected]
    assert len({r.group for r in rows}) > 2 and rows[-1].group == ALL
    for got, want in zip(rows, expected, strict=True):
        assert got.correct == want.correct, got.group
        for field in ("engine_usd", "answerer_usd", "usd_per_correct"):
            mine, theirs = getattr(got, field), getattr(want, field)
            assert (mine is None) == (theirs is None), (got.group, field)
            assert mine is None or abs(mine - theirs) < 1e-9, (got.group, field)
    assert rows[-1].answerer_usd > 0 and rows[-1].usd_per_correct is not None
