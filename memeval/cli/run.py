"""`memeval run`: plan the cases, execute them, fold the results, write the reports."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from memeval.cli.summary import print_summary
from memeval.errors import UsageError
from memeval.plan import CaseRef, RunPlan, new_run_id, select
from memeval.report.markdown import render
from memeval.results import CaseResult
from memeval.runner import RunOptions
from memeval.suites.catalog import resolve
from memeval.summary import build_report

out = Console()


def run(
    engine: Annotated[
        str, typer.Option(help="Engine to evaluate: reference, naive, ...")
    ] = "reference",
    suite: Annotated[str, typer.Option(help="lifecycle, dimensions, all, or a path.")] = "all",
    label: Annotated[str | None, typer.Option(help="Name for this run in reports.")] = None,
    only: Annotated[
        list[str] | None, typer.Option(help="Run only this case id (repeatable).")
    ] = None,
    dimension: Annotated[
        list[str] | None, typer.Option(help="Run only fixtures of this dimension (repeatable).")
    ] = None,
    trials: Annotated[int, typer.Option(min=1, help="Run every case this many times.")] = 1,
    keep: Annotated[
        bool, typer.Option(help="Skip the forget step, to inspect the engine.")
    ] = False,
    verbose: Annotated[bool, typer.Option(help="Print each case as it lands.")] = False,
    concurrency: Annotated[int, typer.Option(min=1, help="Cases run at once.")] = 8,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the JSON report here.")
    ] = None,
    md_path: Annotated[
        Path | None, typer.Option("--md", help="Write the markdown report here.")
    ] = None,
) -> None:
    """Run the suites against an engine and print a summary."""
    from memeval.engines.registry import create
    from memeval.inprocess import run_plan

    loaded = resolve(suite)
    chosen = select(loaded, only or [], dimension or [])
    create(engine)  # fail fast on an unknown engine, before any work starts
    for path in (json_path, md_path):
        if path is not None and path.exists() and path.is_dir():
            raise UsageError(f"{path} is a folder", fix="give a file path for the report")
    run_id = new_run_id()
    plan = RunPlan(
        run_id=run_id,
        label=label or f"{engine}-{run_id}",
        engine=engine,
        suite=loaded.name,
        options=RunOptions(keep=keep),
        cases=[CaseRef(case_id=c.id, trial=t) for t in range(trials) for c in chosen],
    )

    def landed(result: CaseResult) -> None:
        if verbose:
            score = "–" if result.score is None else f"{result.score:.2f}"
            out.print(f"{result.status.value:>6} {score:>5}  {result.case_id} #{result.trial}")

    results = asyncio.run(
        run_plan(plan, {c.id: c for c in chosen}, concurrency=concurrency, on_result=landed)
    )
    report = build_report(
        run_id=plan.run_id,
        label=plan.label,
        engine=plan.engine,
        suite=plan.suite,
        started_at=plan.started_at,
        finished_at=datetime.now(UTC),
        cases=results,
        planned=[ref.key for ref in plan.cases],
    )
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(report.model_dump_json(indent=2))
    if md_path is not None:
        md_path.parent.mkdir(parents=True, exist_ok=True)
        md_path.write_text(render(report))
    print_summary(report, out)
