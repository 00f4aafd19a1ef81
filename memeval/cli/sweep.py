"""`memeval sweep`: several answering models (and engine profiles) over the same cases, as one
budget-capped sweep on the farm that ends with a comparison on the cases every model answered.

Like `memeval run`, the farm is embedded without `MEMEVAL_BROKER_URL` and a fleet with it;
every variant is a run in the store, and the budget and the rate limits live in the farm's
Redis, so a sweep and farm runs on the same broker share a model's limits.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from memeval.cli.estimate import estimate_command
from memeval.cli.options import BaseUrl, Prices, Rates
from memeval.cli.paths import check_output
from memeval.cli.stop import stop_gently_on_sigterm
from memeval.cli.store import usable_store
from memeval.engines.registry import validate as validate_engine
from memeval.errors import UsageError
from memeval.llm.prompt import MAX_TOKENS
from memeval.llm.setup import budget_micros, parse_models
from memeval.llm.sweep import Profile, SweepConfig, SweepReport, parse_profile
from memeval.plan import select
from memeval.report.compare_markdown import render_compare
from memeval.report.markdown import pct
from memeval.results import CaseStatus
from memeval.secrets import redact_model
from memeval.suites.catalog import resolve
from workers.embedded import Pool
from workers.farm import connect
from workers.settings import load_settings
from workers.sweep import sweep

out = Console()
INTERRUPTED = 130


def sweep_command(
    models: Annotated[str, typer.Option("--models", help="Comma-separated model ids.")],
    budget_usd: Annotated[float, typer.Option(help="The most the whole sweep may spend.")],
    trials: Annotated[int, typer.Option(min=1, help="Run every case this many times.")] = 1,
    suite: Annotated[str, typer.Option(help="lifecycle, dimensions, all, or a path.")] = "all",
    engine: Annotated[str, typer.Option(help="Engine, when no --profile is given.")] = "reference",
    profile: Annotated[
        list[str] | None,
        typer.Option(help="Engine profile `NAME: --engine E --k N`, swept like a model."),
    ] = None,
    only: Annotated[list[str] | None, typer.Option(help="Only this case id (repeatable).")] = None,
    dimension: Annotated[
        list[str] | None, typer.Option(help="Only fixtures of this dimension (repeatable).")
    ] = None,
    rate: Rates = None,
    price: Prices = None,
    base_url: BaseUrl = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Completion cap per call.")] = MAX_TOKENS,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            "--concurrency",
            min=1,
            help="Local worker processes (or threads). [default: CPUs]",
        ),
    ] = None,
    pool: Annotated[Pool, typer.Option(help="Local worker pool.")] = "prefork",
    redis_url: Annotated[
        str | None,
        typer.Option(hidden=True, help="Ignored: budgets and limits live in the farm's Redis."),
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the sweep report here.")
    ] = None,
    verbose: Annotated[bool, typer.Option(help="Print each case as it lands.")] = False,
    dry_run: Annotated[
        bool, typer.Option(help="Print the expected model calls and dollars, then stop.")
    ] = False,
) -> None:
    """Answer the suites with several models under one budget on the farm, then compare them.

    Exit codes: 0 the sweep ran to its end (cases skipped by the budget included), 2 bad input,
    130 interrupted (the runs keep what landed and the partial comparison is printed).
    """
    stop_gently_on_sigterm()
    names = parse_models(models)
    budget_micros(budget_usd)  # zero, negative or NaN stops here, before anything else
    check_output("--json", json_path)
    profiles = [parse_profile(p, engine) for p in profile or []] or [
        Profile(name=engine, engine=engine)
    ]
    if len({p.name for p in profiles}) < len(profiles):
        raise UsageError("two profiles share a name", fix="name each --profile differently")
    for each in profiles:
        validate_engine(each.engine)  # also under --dry-run, which never reaches the farm
    if dry_run:
        estimate_command(
            models=models,
            suite=suite,
            only=only,
            dimension=dimension,
            trials=trials,
            profiles=len(profiles),
            max_tokens=max_tokens,
            price=price,
            base_url=base_url,
            budget_usd=budget_usd,
        )
        return
    if redis_url is not None:
        out.print(
            "[yellow]warning:[/] --redis-url is ignored: a sweep runs on the farm and keeps its "
            "budget and limits in the farm's Redis (set MEMEVAL_BROKER_URL to share one)",
            highlight=False,
        )
    chosen = select(resolve(suite), only or [], dimension or [])
    try:
        config = SweepConfig(
            models=names,
            budget_usd=budget_usd,
            profiles=profiles,
            suite=suite,
            trials=trials,
            rates=rate or [],
            prices=price or [],
            base_url=base_url,
            max_tokens=max_tokens,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"--{first['loc'][0]}: {first['msg']}") from None
    settings = load_settings()
    shared = connect(settings)
    report = sweep(
        config,
        chosen,
        settings=settings,
        shared=shared,
        store=usable_store(),
        console=out,
        workers=workers or os.cpu_count() or 1,
        pool=pool,
        verbose=verbose,
    )
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(redact_model(report).model_dump_json(indent=2))
    print_sweep(report, out)
    if report.interrupted:
        raise typer.Exit(INTERRUPTED)


def print_sweep(report: SweepReport, console: Console) -> None:
    """The sweep's spend and coverage, its runs, then `memeval compare` on the common subset."""
    console.print(
        f"[bold]sweep[/] {report.sweep_id}  spent ${report.spent_usd:.4f} of "
        f"${report.budget_usd:.2f}  prompt {report.prompt_version}",
        highlight=False,
    )
    if report.interrupted:
        console.print("[yellow]interrupted[/]: the runs keep what landed", highlight=False)
    if report.budget_closed:
        console.print(
            f"[yellow]budget closed ({report.budget_closed}): {report.skipped_budget} case runs "
            f"skipped_budget[/]",
            highlight=False,
        )
    console.print(
        f"{report.done} of {report.planned} case runs done, {report.errors} errors; "
        f"common subset {len(report.common)} cases ({report.coverage:.0%} covered)",
        highlight=False,
    )
    runs = Table(title="runs", caption="answers and model right: on the common subset")
    columns = ("done", "skipped_budget", "other", "answerer usd", "answers", "model right")
    for column in ("variant", "run", *columns):
        runs.add_column(column, justify="left" if column in ("variant", "run") else "right")
    for run in report.runs:
        statuses = [c.status for c in run.report.cases]
        done = statuses.count(CaseStatus.done)
        skipped = statuses.count(CaseStatus.skipped_budget)
        runs.add_row(
            run.variant.name,
            run.report.run_id,
            str(done),
            str(skipped),
            str(len(statuses) + len(run.report.missing) - done - skipped),
            f"${sum(c.answerer_usd_micros for c in run.report.cases) / 1e6:.4f}",
            str(run.answers),
            pct(run.model_answer),
        )
    console.print(runs)
    if report.comparison is None:
        console.print("nothing to compare: a single variant, or no case every variant completed")
        return
    console.print(render_compare(report.comparison), markup=False, highlight=False, soft_wrap=True)
