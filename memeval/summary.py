"""Folds a run's case results into its report: dimension scores, composite and KPIs."""

from __future__ import annotations

from datetime import datetime

from memeval.results import CaseResult, RunReport
from memeval.scoring.kpis import composite, dimension_scores, kpis


def build_report(
    *,
    run_id: str,
    label: str,
    engine: str,
    suite: str,
    started_at: datetime,
    finished_at: datetime | None,
    cases: list[CaseResult],
    planned: list[str],
) -> RunReport:
    """`planned` holds `case_id#trial` keys, so cases that never reported are listed as missing."""
    dims = dimension_scores(cases)
    have = {f"{c.case_id}#{c.trial}" for c in cases}
    return RunReport(
        run_id=run_id,
        label=label,
        engine=engine,
        suite=suite,
        started_at=started_at,
        finished_at=finished_at,
        composite=composite(dims),
        dimensions=dims,
        kpis=kpis(cases),
        cases=sorted(cases, key=lambda c: (c.case_id, c.trial)),
        missing=[key for key in planned if key not in have],
    )
