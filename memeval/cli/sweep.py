"""`memeval sweep`: several answering models (and engine profiles) over the same cases, as one
budget-capped sweep that ends with a comparison on the cases every model answered.

Cases run in this process with asyncio, like `run --in-process`; the budget and the rate limits
still live in Redis, so a sweep and farm runs sharing a model share its limits.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from memeval.engines.base import Engine
from memeval.errors import UsageError
from memeval.llm.prompt import MAX_TOKENS
from memeval.llm.setup import budget_micros, parse_models
from memeval.llm.sweep import Job, Profile, SweepConfig, SweepReport, parse_profile, sweep
from memeval.plan import select
from memeval.results import CaseResult
from memeval.suites.catalog import resolve

out = Console()
REDIS_URL = "redis://127.0.0.1:6379/0"


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
    rate: Annotated[
        list[str] | None, typer.Option(help="Global limit, e.g. engine=20/s or model=60/m.")
    ] = None,
    price: Annotated[
        list[str] | None,
        typer.Option(help="MODEL=PROMPT/COMPLETION in USD per million tokens (repeatable)."),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible API. [default: OpenRouter]")
    ] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Completion cap per call.")] = MAX_TOKENS,
    concurrency: Annotated[int, typer.Option(min=1, help="Cases run at once.")] = 8,
    redis_url: Annotated[
        str | None, typer.Option(help=f"Where budgets and limits live. [default: {REDIS_URL}]")
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the sweep report here.")
    ] = None,
    verbose: Annotated[bool, typer.Option(help="Print each case as it lands.")] = False,
) -> None:
    """Answer the suites with several models under one budget, then compare them."""
    names = parse_models(models)
    budget_micros(budget_usd)  # zero, negative or NaN stops here, before anything else
    if json_path is not None and json_path.is_dir():
        raise UsageError(f"{json_path} is a folder", fix="give a file path for the report")
    profiles = [parse_profile(p, engine) for p in profile or []] or [
        Profile(name=engine, engine=engine)
    ]
    if len({p.name for p in profiles}) < len(profiles):
        raise UsageError("two profiles share a name", fix="name each --profile differently")
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
            concurrency=concurrency,
            redis_url=redis_url or os.environ.get("MEMEVAL_REDIS_URL") or REDIS_URL,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"--{first['loc'][0]}: {first['msg']}") from None

    def landed(job: Job, result: CaseResult) -> None:
        if verbose:
            out.print(f"{result.status.value:>14}  {job.variant}  {job.case.key}")

    report = asyncio.run(
        sweep(config, chosen, _create_engine, say=lambda line: out.print(line), on_result=landed)
    )
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(report.model_dump_json(indent=2))
    print_sweep(report, out)


def _create_engine(name: str) -> Engine:
    """Imported late: the registry loads every engine, and most commands need none."""
    from memeval.engines.registry import create

    return create(name)


def print_sweep(report: SweepReport, console: Console) -> None:
    console.print(
        f"[bold]sweep[/] {report.sweep_id}  spent ${report.spent_usd:.4f} of "
        f"${report.budget_usd:.2f}  prompt {report.prompt_version}"
    )
    if report.budget_closed:
        console.print(
            f"[yellow]budget closed ({report.budget_closed}): {report.skipped_budget} case runs "
            f"skipped_budget[/]"
        )
    console.print(
        f"{report.done} of {report.planned} case runs done, {report.errors} errors; "
        f"common subset {len(report.common)} cases ({report.coverage:.0%} covered)"
    )
    table = Table(title="comparison on the common subset")
    columns = ("variant", "cases", "answers", "model answer", "extractive", "pack hit", "composite")
    for column in (*columns, "usd"):
        table.add_column(column, justify="left" if column == "variant" else "right")
    for row in report.comparison:
        table.add_row(
            row.variant,
            str(row.cases),
            str(row.answers),
            _pct(row.model_answer),
            _pct(row.extractive_answer),
            _pct(row.pack_hit),
            _pct(row.composite),
            f"${row.answerer_usd:.4f}",
        )
    console.print(table)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"
