"""Folds a run's case results into its report: dimension scores, composite and KPIs."""

from __future__ import annotations

from datetime import datetime

from memeval.results import CaseResult, CaseStatus, RunReport
from memeval.scoring.kpis import composite, dimension_scores, kpis, tag_kpis


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
    """`planned` holds `case_id#trial` keys, so cases that never reported are listed as missing.

    A score over fewer cases than planned is marked `partial`, naming every case it leaves
    out: without the mark, 8 of 10 abstention fixtures scoring 100% reads as a perfect run."""
    dims = dimension_scores(cases)
    have = {f"{c.case_id}#{c.trial}" for c in cases}
    missing = [key for key in planned if key not in have]
    unscored = [
        f"{c.case_id}#{c.trial} ({c.status.value})"
        for c in cases
        if c.status is not CaseStatus.done
    ] + [f"{key} (missing)" for key in missing]
    return RunReport(
        run_id=run_id,
        label=label,
        engine=engine,
        suite=suite,
        started_at=started_at,
        finished_at=finished_at,
        composite=composite(dims),
        dimensions=dims,
        kpis=[*kpis(cases), *tag_kpis(cases)],
        cases=sorted(cases, key=lambda c: (c.case_id, c.trial)),
        missing=missing,
        partial=bool(unscored),
        unscored=sorted(unscored),
        infra_retries=sum(c.infra_retries for c in cases),
        case_restarts=sum(c.attempt for c in cases),
    )
