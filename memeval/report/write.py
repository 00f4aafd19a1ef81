"""Writes a run's reports: markdown to read, JSON holding everything, HTML to look at."""

from __future__ import annotations

import re
import shutil
from enum import StrEnum
from pathlib import Path

from memeval.errors import UsageError
from memeval.report.html import pages_folder, render_html, render_pages
from memeval.report.intervals import RunIntervals, run_intervals
from memeval.report.markdown import render
from memeval.results import RunReport
from memeval.secrets import redact_model

RUNS_ROOT = Path("memeval-runs")
_PAGE = re.compile(r"[0-9]{3,}\.html")


class Format(StrEnum):
    md = "md"
    json = "json"
    html = "html"


def default_out_dir(label: str, root: Path = RUNS_ROOT) -> Path:
    """`memeval-runs/<label>/`, with the label made safe as one folder name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._") or "run"
    return root / safe


def render_as(report: RunReport, fmt: Format, intervals: RunIntervals | None = None) -> str:
    """The JSON is `RunReport` whole, every pack included, so it reloads as one; written
    without indentation, which made a sixth of a large run's file. The HTML is the one-file
    page, every case in it (`write_html` writes the paged one). Every report format leaves
    through here or `write_html`, so these are where a secret quoted in a result is masked."""
    return _render(redact_model(report), fmt, intervals)


def _render(masked: RunReport, fmt: Format, intervals: RunIntervals | None) -> str:
    if fmt is Format.json:
        return masked.model_dump_json() + "\n"
    ci = intervals or run_intervals(masked)
    return render(masked, ci) if fmt is Format.md else render_html(masked, ci)


def write_html(report: RunReport, path: Path, intervals: RunIntervals | None = None) -> list[Path]:
    """The HTML report at `path` and, for a run too large for one page, its case pages in
    `pages_folder(path)`; returns the case pages written. Pages of an earlier, larger report
    there are removed: the summary links exactly the pages beside it."""
    return _write_html(redact_model(report), path, intervals)


def _write_html(masked: RunReport, path: Path, intervals: RunIntervals | None) -> list[Path]:
    folder = pages_folder(path)
    if folder.exists() and not all(_PAGE.fullmatch(p.name) for p in folder.iterdir()):
        raise UsageError(
            f"{folder} holds files other than case pages, and the report's pages go there",
            fix="move them, or write the report under another name",
        )
    written = render_pages(masked, path.name, intervals)
    part = folder.with_name(f".{folder.name}.part")
    shutil.rmtree(part, ignore_errors=True)
    try:
        if written.pages:
            part.mkdir(parents=True)
            for name, text in written.pages.items():
                (part / Path(name).name).write_text(text, encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        if written.pages:
            part.replace(folder)
        _replace(path, written.main)
    finally:
        shutil.rmtree(part, ignore_errors=True)
    return [path.parent / name for name in written.pages]


def _replace(path: Path, text: str) -> None:
    """Whole or not at all: a report cut off by Ctrl-C would read as the run's."""
    part = path.with_name(f".{path.name}.part")
    try:
        part.write_text(text, encoding="utf-8")
        part.replace(path)
    finally:
        part.unlink(missing_ok=True)


def write_reports(report: RunReport, out_dir: Path) -> dict[str, Path]:
    """Writes report.md, report.json and report.html (with report-cases/ for a large run);
    returns their paths by format."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"{out_dir} is a file", fix="give --out a folder for the reports")
    out_dir.mkdir(parents=True, exist_ok=True)
    ci = run_intervals(report)
    masked = redact_model(report)  # once: the scan reads every pack
    paths = {}
    for fmt in Format:
        path = out_dir / f"report.{fmt.value}"
        if fmt is Format.html:
            _write_html(masked, path, ci)
        else:
            _replace(path, _render(masked, fmt, ci))
        paths[fmt.value] = path
    return paths
