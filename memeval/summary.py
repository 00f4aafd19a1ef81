"""Folds a run's case results into its report: dimension scores, composite and KPIs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from urllib.parse import unquote

from rich.markup import escape

from memeval.results import SCHEMA_VERSION, CaseResult, CaseStatus, RunReport
from memeval.scoring.kpis import composite, kpis_of, tag_kpis, tally
from memeval.suites.fixture import Dimension

DASH = "–"
"""What a number that was not measured shows: never a zero that reads as measured."""


def pct(value: float | None) -> str:
    return DASH if value is None else f"{100 * value:.1f}%"


def plural(n: int, noun: str) -> str:
    """`1 case`, `2 cases`: never "1 cases"."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def readable_engine(text: str) -> str:
    """An engine reference as a reader takes it in a header or a listing:
    `http?url=http://host:1`, not the `http?url=http%3A%2F%2Fhost%3A1` it is stored as."""
    return unquote(text)


def subset_name(
    only: Sequence[str], dimensions: Sequence[str], limit: int | None = None
) -> str | None:
    """The name a run's selection goes by wherever its scores show ("temporal only",
    "3 cases only", "first 20 cases only"), so a score over part of a suite never reads as the
    whole; None when the whole suite was planned."""
    parts = [] if limit is None else [f"first {plural(limit, 'case')}"]
    if dimensions:
        parts.append(", ".join(sorted(set(dimensions))))
    if only:
        picked = sorted(set(only))
        parts.append(picked[0] if len(picked) == 1 else f"{len(picked)} cases")
    return f"{', '.join(parts)} only" if parts else None


def scope(subset: str | None, dimensions: Iterable[str | None]) -> str | None:
    """The subset a run is named by: the one it recorded, else the dimensions its fixtures
    cover when they leave some out (a suite path of temporal fixtures is "temporal only")."""
    if subset:
        return subset
    covered = {d for d in dimensions if d is not None}
    if covered and len(covered) < len(Dimension):
        return subset_name([], sorted(covered))
    return None


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
    subset: str | None = None,
) -> RunReport:
    """`planned` holds `case_id#trial` keys, so cases that never reported are listed as missing.

    A score over fewer cases than planned is marked `partial`, naming every case it leaves
    out: without the mark, 8 of 10 abstention fixtures scoring 100% reads as a perfect run."""
    whole = tally(cases)  # once: the dimensions and the KPIs read the same sums
    dims = whole.dimensions()
    have = {f"{c.case_id}#{c.trial}" for c in cases}
    missing = [key for key in planned if key not in have]
    unscored = [
        f"{c.case_id}#{c.trial} ({c.status.value})"
        for c in cases
        if c.status is not CaseStatus.done
    ] + [f"{key} (missing)" for key in missing]
    return RunReport(
        schema_version=SCHEMA_VERSION,
        run_id=run_id,
        label=label,
        engine=engine,
        suite=suite,
        subset=subset,
        started_at=started_at,
        finished_at=finished_at,
        composite=composite(dims),
        dimensions=dims,
        kpis=[*kpis_of(whole), *tag_kpis(cases)],
        cases=sorted(cases, key=lambda c: (c.case_id, c.trial)),
        missing=missing,
        partial=bool(unscored),
        unscored=sorted(unscored),
        infra_retries=sum(c.infra_retries for c in cases),
        case_restarts=sum(c.attempt for c in cases),
    )


def case_line(
    status: CaseStatus, score: float | None, where: str, reason: str | None = None
) -> str:
    """What `--verbose` prints as a case lands: `pass 1.00`, `FAIL 0.67` (a case that ran
    but missed something), or the status of one that did not run to the end (`error`,
    `lost`) with its reason, never "done 0.00" for a case that failed every check."""
    shown = "–" if score is None else f"{score:.2f}"
    if status is not CaseStatus.done:
        verdict = f"[red]{status.value}[/]"
    elif score is None or score >= 1.0:
        verdict = "[green]pass[/]"
    else:
        verdict = "[bold red]FAIL[/]"
    why = (
        f"  [dim]{escape(short_reason(reason))}[/]"
        if reason and status is not CaseStatus.done
        else ""
    )
    return f"{verdict} {shown:>4}  {escape(where)}{why}"


REASON_CHARS = 200
"""A case's reason in the terminal: the first line, cut here; report.md keeps it whole."""


def short_reason(reason: str) -> str:
    line = reason.strip().splitlines()[0] if reason.strip() else reason
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 1] + "…"
