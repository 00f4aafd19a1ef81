"""`memeval sweep`: several answering models (and engine profiles) over the same cases, as one
budget-capped sweep on the farm that ends with a comparison on the cases every model answered.

Like `memeval run`, the farm is embedded without `MEMEVAL_BROKER_URL` and a fleet with it;
every variant is a run in the store, and the budget and the rate limits live in the farm's
Redis, so a sweep and farm runs on the same broker share a model's limits.
"""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from memeval import api
from memeval.cli import sweep_options as opt
from memeval.cli.estimate import estimate_command
from memeval.cli.options import BaseUrl, Prices, Rates
from memeval.cli.stop import stop_gently_on_sigterm
from memeval.cli.summary import print_compare
from memeval.cli.sweep_options import SweepFlags
from memeval.evaluation.paths import check_output
from memeval.llm.prompt import MAX_TOKENS
from memeval.llm.setup import check_model_options, parse_models
from memeval.llm.sweep import SweepReport, profiles_for
from memeval.report.numbers import pct
from memeval.results import CaseStatus
from memeval.secrets import redact_model
from memeval.summary import plural
from memeval_farm.settings import load_settings

out = Console()
INTERRUPTED = 130


def sweep_command(
    ctx: typer.Context,
    models: opt.Models,
    budget_usd: opt.BudgetUsd,
    trials: opt.Trials = 1,
    suite: opt.Suite = "all",
    engine: opt.Engine = "reference",
    profile: opt.Profiles = None,
    only: opt.Only = None,
    dimension: opt.Dimensions = None,
    rate: Rates = None,
    price: Prices = None,
    base_url: BaseUrl = None,
    max_tokens: opt.MaxTokens = MAX_TOKENS,
    workers: opt.Workers = None,
    pool: opt.WorkerPool = "prefork",
    redis_url: opt.RedisUrl = None,
    json_path: opt.JsonPath = None,
    verbose: opt.Verbose = False,
    dry_run: opt.DryRun = False,
) -> None:
    """Answer the suites with several models under one budget on the farm, then compare them.

    Exit codes: 0 the sweep ran to its end (cases skipped by the budget included), 2 bad input,
    130 interrupted (the runs keep what landed and the partial comparison is printed).
    """
    flags = SweepFlags.model_validate(ctx.params)
    stop_gently_on_sigterm()
    names = parse_models(flags.models)
    check_model_options(flags.budget_usd, flags.rate or [], flags.price or [])  # before anything
    check_output("--json", flags.json_path)
    profiles = profiles_for(flags.profile, flags.engine)
    if flags.dry_run:
        _estimate(flags, len(profiles))
        return
    if flags.redis_url is not None:
        out.print(
            "[yellow]warning:[/] --redis-url is ignored: a sweep runs on the farm and keeps its "
            "budget and limits in the farm's Redis (set MEMEVAL_BROKER_URL to share one)",
            highlight=False,
        )
    report = _sweep(flags, names)
    if flags.json_path is not None:
        flags.json_path.parent.mkdir(parents=True, exist_ok=True)
        flags.json_path.write_text(redact_model(report).model_dump_json(indent=2))
    print_sweep(report, out)
    if report.interrupted:
        raise typer.Exit(INTERRUPTED)


def _estimate(flags: SweepFlags, profiles: int) -> None:
    estimate_command(
        models=flags.models,
        suite=flags.suite,
        only=flags.only,
        dimension=flags.dimension,
        trials=flags.trials,
        profiles=profiles,
        max_tokens=flags.max_tokens,
        price=flags.price,
        base_url=flags.base_url,
        budget_usd=flags.budget_usd,
    )


def _sweep(flags: SweepFlags, names: list[str]) -> SweepReport:
    """`memeval.sweep`, on the farm the environment names (embedded without a broker URL)."""
    return api.sweep(
        names,
        flags.budget_usd,
        flags.suite,
        engine=flags.engine,
        profiles=flags.profile,
        only=flags.only,
        dimension=flags.dimension,
        trials=flags.trials,
        rates=flags.rate,
        prices=flags.price,
        base_url=flags.base_url,
        max_tokens=flags.max_tokens,
        farm=load_settings().broker_url or api.EMBEDDED,
        workers=flags.workers,
        pool=flags.pool,
        verbose=flags.verbose,
        console=out,
    )


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
        f"{report.done} of {plural(report.planned, 'case run')} done, "
        f"{plural(report.errors, 'error')}; common subset {plural(len(report.common), 'case')} "
        f"({report.coverage:.0%} covered)",
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
    print_compare(report.comparison, console)
