"""`memeval report` and `memeval compare`, plus the CI-gate options `memeval run` takes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from memeval.cli.paths import check_output
from memeval.llm.sweep import sweep_runs
from memeval.report.compare import GroupBy, Verdict, compare
from memeval.report.compare_markdown import render_compare
from memeval.report.gate import EXIT_REGRESSION, GateFailed
from memeval.report.html import render_compare_html
from memeval.report.intervals import run_intervals
from memeval.report.source import load_report
from memeval.report.stats import RESAMPLES
from memeval.report.write import Format, render_as
from memeval.store import open_store

err = Console(stderr=True)

DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="Results store; default MEMEVAL_DATABASE_URL, else ./memeval-runs/memeval.db.",
    ),
]
Resamples = Annotated[
    int,
    typer.Option(min=100, help="Bootstrap resamples behind every interval and verdict."),
]
FailUnder = Annotated[
    float | None,
    typer.Option(
        "--fail-under",
        min=0.0,
        max=1.0,
        help="Exit 3 when the composite is below this share (0–1), e.g. 0.7.",
    ),
]
FailOnRegression = Annotated[
    str | None,
    typer.Option(
        "--fail-on-regression",
        metavar="BASELINE",
        help="Exit 4 when the run is worse than BASELINE (report.json, its folder, or a run id)"
        " beyond noise.",
    ),
]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    err.print(f"wrote {path}", highlight=False)


def report(
    run: Annotated[str, typer.Argument(help="A run id in the store, or a report.json.")],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="md, json or html.")] = Format.md,
    out: Annotated[
        Path | None,
        typer.Option(help="Write to this file (or into this folder as report.<format>)."),
    ] = None,
    resamples: Resamples = RESAMPLES,
    database_url: DatabaseUrl = None,
) -> None:
    """Regenerate a run's report from the results store; to stdout unless --out is given."""
    if out is not None and not out.is_dir():
        check_output("--out", out)
    loaded = load_report(run, database_url)
    ci = None if fmt is Format.json else run_intervals(loaded, resamples=resamples)
    text = render_as(loaded, fmt, ci)
    if out is None:
        typer.echo(text, nl=False)
        return
    _write(out / f"report.{fmt.value}" if out.is_dir() else out, text)


def compare_runs(
    runs: Annotated[
        list[str], typer.Argument(help="Runs: report.json files, their folders, or run ids.")
    ],
    baseline: Annotated[
        str | None, typer.Option(help="The group (or a run in it) to compare against.")
    ] = None,
    by: Annotated[
        GroupBy, typer.Option(help="Pool runs sharing a label or engine as repeats.")
    ] = GroupBy.label,
    html: Annotated[Path | None, typer.Option(help="Also write the comparison as HTML.")] = None,
    fail_on_regression: Annotated[
        bool, typer.Option(help=f"Exit {EXIT_REGRESSION} when any candidate regressed.")
    ] = False,
    resamples: Resamples = RESAMPLES,
    database_url: DatabaseUrl = None,
) -> None:
    """Say which differences between runs are real: better, worse, or within noise."""
    check_output("--html", html)
    reports = [load_report(r, database_url) for r in _expand_sweeps(runs, database_url)]
    result = compare(reports, baseline=baseline, by=by, resamples=resamples)
    typer.echo(render_compare(result), nl=False)
    if html is not None:
        _write(html, render_compare_html(result))
    regressed = [c for c in result.comparisons if c.moved(Verdict.worse)]
    if fail_on_regression and regressed:
        raise GateFailed("; ".join(c.headline for c in regressed), exit_code=EXIT_REGRESSION)


def _expand_sweeps(refs: list[str], database_url: str | None) -> list[str]:
    """A sweep id stands for every run of that sweep, so `memeval compare SWEEP_ID` is the
    sweep's own comparison; a path or a run id is left as it is."""
    with open_store(database_url) as store:
        url = store.url
        if url.get_backend_name() == "sqlite" and not Path(url.database or "").exists():
            return refs  # no store to look in; `load_report` says so for any run id
        expanded: list[str] = []
        for ref in refs:
            runs = [] if Path(ref).exists() or store.get_run(ref) else sweep_runs(store, ref)
            expanded += runs or [ref]
        return expanded
