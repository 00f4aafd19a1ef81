"""Writes a run's reports: markdown to read, JSON holding everything, HTML to look at."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path

from memeval.errors import UsageError
from memeval.report.html import render_html
from memeval.report.intervals import RunIntervals, run_intervals
from memeval.report.markdown import render
from memeval.results import RunReport
from memeval.secrets import redact_model

RUNS_ROOT = Path("memeval-runs")


class Format(StrEnum):
    md = "md"
    json = "json"
    html = "html"


def default_out_dir(label: str, root: Path = RUNS_ROOT) -> Path:
    """`memeval-runs/<label>/`, with the label made safe as one folder name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._") or "run"
    return root / safe


def render_as(report: RunReport, fmt: Format, intervals: RunIntervals | None = None) -> str:
    """The JSON is `RunReport` whole, every pack included, so it reloads as one. Every report
    format leaves through here, so this is where a secret quoted in a result is masked."""
    report = redact_model(report)
    if fmt is Format.json:
        return report.model_dump_json(indent=2) + "\n"
    ci = intervals or run_intervals(report)
    return render(report, ci) if fmt is Format.md else render_html(report, ci)


def write_reports(report: RunReport, out_dir: Path) -> dict[str, Path]:
    """Writes report.md, report.json and report.html; returns their paths by format."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"{out_dir} is a file", fix="give --out a folder for the reports")
    out_dir.mkdir(parents=True, exist_ok=True)
    ci = run_intervals(report)
    paths = {}
    for fmt in Format:
        path = out_dir / f"report.{fmt.value}"
        # Whole or not at all: a report cut off by Ctrl-C would read as the run's.
        part = path.with_name(f".{path.name}.part")
        try:
            part.write_text(render_as(report, fmt, ci), encoding="utf-8")
            part.replace(path)
        finally:
            part.unlink(missing_ok=True)
        paths[fmt.value] = path
    return paths
