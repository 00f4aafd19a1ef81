"""`memeval report` and `memeval compare`, plus the CI-gate options `memeval run` takes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from memeval.cli.summary import print_compare
from memeval.errors import GateFailed, UsageError
from memeval.evaluation.paths import check_output
from memeval.llm.sweep import sweep_runs
from memeval.report.compare import GroupBy, Verdict, compare
from memeval.report.compare_markdown import render_compare
from memeval.report.gate import EXIT_REGRESSION
from memeval.report.html import pages_folder, render_compare_html
from memeval.report.intervals import run_intervals
from memeval.report.source import load_report
from memeval.report.stats import RESAMPLES
from memeval.report.write import Format, render_as, write_html
from memeval.results import RunReport
from memeval.store import Store, open_store

out = Console()
err = Console(stderr=True)

RUN_REF = (
    "A run id, a label, `latest` (the newest run), or a report.json or its folder. A label "
    "several runs share names the newest of them, and says so."
)

DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="Results store.",
        show_default="MEMEVAL_DATABASE_URL, else ./memeval-runs/memeval.db",
    ),
]
Resamples = Annotated[
    int,
    typer.Option(min=100, help="Bootstrap resamples behind every interval and verdict."),
]


def share(value: float | None) -> float | None:
    """`--fail-under 90` means 90%: said in one line with the share to write, not a boxed
    range error."""
    if value is not None and not 0.0 <= value <= 1.0:
        percent = 1 < value <= 100 and value == int(value)
        hint = f"--fail-under {value / 100:g} for {value:g}%" if percent else "--fail-under 0.9"
        raise UsageError(
            f"--fail-under takes a share from 0 to 1, not {value:g}", fix=f"e.g. {hint}"
        )
    return value


FailUnder = Annotated[
    float | None,
    typer.Option(
        "--fail-under",
        callback=share,
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
    run: Annotated[
        str | None, typer.Argument(metavar="RUN", help=RUN_REF, show_default=False)
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="md, json or html.")] = Format.md,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Write to this file (or into this folder as report.<format>). A large run's "
            "HTML puts its case pages beside the file, in <name>-cases/; on stdout it is one "
            "file holding every case.",
            show_default="stdout",
        ),
    ] = None,
    resamples: Resamples = RESAMPLES,
    database_url: DatabaseUrl = None,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the JSON report's JSON Schema instead.")
    ] = False,
) -> None:
    """Regenerate a run's report from the results store; to stdout unless --out is given."""
    if schema:
        typer.echo(json.dumps(RunReport.model_json_schema(), indent=2))
        return
    if run is None:
        raise UsageError("name the run to report", fix="give a run id, a label or `latest`")
    if out is not None and not out.is_dir():
        check_output("--out", out)
    loaded = load_report(_run_refs([run], database_url, sweeps=False)[0], database_url)
    ci = None if fmt is Format.json else run_intervals(loaded, resamples=resamples)
    if out is None:
        typer.echo(render_as(loaded, fmt, ci), nl=False)
        return
    path = out / f"report.{fmt.value}" if out.is_dir() else out
    if fmt is not Format.html:
        _write(path, render_as(loaded, fmt, ci))
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    pages = write_html(loaded, path, ci)
    beside = f", its {len(pages)} case pages in {pages_folder(path)}/" if pages else ""
    err.print(f"wrote {path}{beside}", highlight=False, soft_wrap=True)


def compare_runs(
    runs: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN...",
            help=f"{RUN_REF} A sweep id stands for every run of the sweep.",
            show_default=False,
        ),
    ],
    baseline: Annotated[
        str | None,
        typer.Option(
            help="The group (or a run in it) to compare against.", show_default="the first given"
        ),
    ] = None,
    by: Annotated[
        GroupBy, typer.Option(help="Pool runs sharing a label or engine as repeats.")
    ] = GroupBy.label,
    md: Annotated[
        Path | None, typer.Option("--md", help="Also write the comparison as markdown.")
    ] = None,
    html: Annotated[Path | None, typer.Option(help="Also write the comparison as HTML.")] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            metavar="",
            help=f"Exit {EXIT_REGRESSION} when any candidate regressed.",
        ),
    ] = False,
    resamples: Resamples = RESAMPLES,
    database_url: DatabaseUrl = None,
) -> None:
    """Say which differences between runs are real: better, worse, or within noise.

    One verdict line per candidate, then the tables; latency and cost show how they moved but
    never gate. --md and --html write the same comparison as files."""
    check_output("--md", md)
    check_output("--html", html)
    reports = [load_report(r, database_url) for r in _run_refs(runs, database_url)]
    result = compare(reports, baseline=baseline, by=by, resamples=resamples)
    print_compare(result, out)
    if md is not None:
        _write(md, render_compare(result))
    if html is not None:
        _write(html, render_compare_html(result))
    regressed = [c for c in result.comparisons if c.moved(Verdict.worse)]
    if fail_on_regression and regressed:
        raise GateFailed("; ".join(c.headline for c in regressed), exit_code=EXIT_REGRESSION)


def _run_refs(refs: list[str], database_url: str | None, *, sweeps: bool = True) -> list[str]:
    """Each reference as `load_report` takes it: a path as it is, else the id of the run it
    names in the store (see `Store.resolve_run`). With `sweeps`, a sweep id stands for every
    run of that sweep, so `memeval compare SWEEP_ID` is the sweep's own comparison."""
    with open_store(database_url) as store:
        url = store.url
        if url.get_backend_name() == "sqlite" and not Path(url.database or "").exists():
            return refs  # no store to look in; `load_report` says so for any run id
        expanded: list[str] = []
        for ref in refs:
            path = Path(ref)
            if path.exists() or path.suffix == ".json" or store.get_run(ref) is not None:
                expanded.append(ref)  # `load_report` reads it, or says there is no such file
            elif sweeps and (runs := sweep_runs(store, ref)):
                expanded += runs
            else:
                expanded.append(_named_run(store, ref))
        return expanded


def _named_run(store: Store, ref: str) -> str:
    match = store.resolve_run(ref)
    if (note := match.note(ref)) is not None:
        err.print(note, highlight=False)
    return match.record.id
