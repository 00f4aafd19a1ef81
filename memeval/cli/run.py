"""`memeval run`: plan the cases, run them on the farm, fold the results, write the reports.

Without `MEMEVAL_BROKER_URL` the farm is embedded: a private Redis and a local worker node live
for this command only. With it, this command only dispatches and waits (or, with `--detach`,
prints the run id and leaves the work to `memeval worker` processes anywhere). Either way each
case is a task on its own tenant, and the store, not the broker, holds the results.

The run itself (plan, resume, budget, execute, close, write the reports) is
`memeval.evaluation`, which `memeval.evaluate` runs too: this command parses the options,
prints, and turns the run's end into an exit code.
"""

from __future__ import annotations

import time

import typer
from rich.console import Console

from memeval.cli import run_options as opt
from memeval.cli.estimate import estimate_command
from memeval.cli.options import BaseUrl, ModelTimeout, Prices, Rates, Workers
from memeval.cli.report import FailOnRegression, FailUnder
from memeval.cli.run_options import RunFlags
from memeval.cli.stop import stop_gently_on_sigterm
from memeval.cli.summary import print_summary
from memeval.errors import UsageError
from memeval.evaluation import outcome
from memeval.evaluation.execution import Execution, Executor, InProcess, execute
from memeval.evaluation.models import DEFAULT_MODEL
from memeval.evaluation.outcome import RunEnd, Stop
from memeval.evaluation.paths import check_output
from memeval.evaluation.planning import PlannedRun, concurrency, plan_new, plan_resume
from memeval.evaluation.preflight import check_engine
from memeval.evaluation.store import usable_store
from memeval.llm.judge import JudgeMode
from memeval.llm.setup import check_model_options
from memeval.report.gate import enforce_gates
from memeval.report.source import load_report
from memeval.report.stored import require_run
from memeval.results import RunReport
from memeval.runner.refusals import stopped
from memeval.store import Store
from memeval.summary import plural
from memeval.viewer.discovery import run_url, store_key
from memeval_farm.settings import FarmSettings, load_settings

out = Console()
BUDGET_REACHED = 5
INTERRUPTED = 130


def run(
    ctx: typer.Context,
    engine: opt.Engine = None,
    url: opt.Url = None,
    enrich_wait: opt.EnrichWait = None,
    suite: opt.Suite = None,
    label: opt.Label = None,
    only: opt.Only = None,
    dimension: opt.Dimensions = None,
    limit: opt.Limit = None,
    trials: opt.Trials = None,
    keep: opt.Keep = False,
    verbose: opt.Verbose = False,
    workers: Workers = None,
    pool: opt.WorkerPool = "prefork",
    detach: opt.Detach = False,
    resume: opt.Resume = None,
    in_process: opt.InProcess = False,
    out_dir: opt.OutDir = None,
    json_path: opt.JsonPath = None,
    md_path: opt.MdPath = None,
    llm: opt.Llm = False,
    model: opt.Model = None,
    judge: opt.Judge = None,
    judge_mode: opt.JudgeModeOption = JudgeMode.strict,
    base_url: BaseUrl = None,
    max_tokens: opt.MaxTokens = None,
    budget_usd: opt.BudgetUsd = None,
    price: Prices = None,
    rate: Rates = None,
    model_timeout: ModelTimeout = None,
    dry_run: opt.DryRun = False,
    fail_under: FailUnder = None,
    fail_on_regression: FailOnRegression = None,
    deadline: opt.Deadline = None,
    pack_tokens: opt.PackTokens = None,
    pack_sections: opt.PackSections = None,
    noise: opt.NoiseSizes = None,
    needle: opt.Needle = None,
    seed: opt.Seed = None,
) -> None:
    """Run the suites against an engine and print a summary.

    Exit codes: 0 all cases done, 1 some case errored, lost or missing, 2 bad input,
    3 composite below --fail-under, 4 regression against --fail-on-regression, 5 the model
    budget was reached (`--resume RUN --budget-usd LARGER` answers the calls it skipped),
    6 the engine's credits ran out (402), 130 interrupted."""
    began = time.monotonic()
    flags = RunFlags.model_validate(ctx.params)
    stop_gently_on_sigterm()
    _run(flags, began)


def _run(flags: RunFlags, began: float) -> None:
    """The run as the flags ask for it: check, plan, execute (or dispatch), conclude;
    `began`: when the command started, for the summary's last line."""
    settings = load_settings()
    local = concurrency(flags.workers)
    baseline = _checked(flags, settings)
    if flags.dry_run:
        _estimate(flags)
        return
    farm = _executor(flags, settings)
    store = usable_store()
    planned = _plan(flags, farm, store)
    if flags.detach:
        from memeval_farm.executor import FarmExecutor

        assert isinstance(farm, FarmExecutor)  # `_checked` refused --detach without a fleet
        farm.dispatch_detached(store, planned, out)
        out.print(planned.run_id)
        return
    end = execute(farm, store, planned, _how(flags, local))
    _conclude(end, store, planned, flags.fail_under, baseline, time.monotonic() - began)


def _executor(flags: RunFlags, settings: FarmSettings) -> Executor:
    """Where the cases run. `--in-process` imports no part of the farm's Celery."""
    if flags.in_process:
        from memeval_farm.redis_state import shared_for_process

        return InProcess(shared_for_process())
    from memeval_farm.executor import FarmExecutor

    return FarmExecutor.connected(settings)


def _how(flags: RunFlags, workers: int) -> Execution:
    return Execution(
        workers=workers,
        pool=flags.pool,
        verbose=flags.verbose,
        outputs=flags.outputs(),
        console=out,
    )


def _show_viewer(store: Store, run_id: str) -> None:
    """Where a running `memeval view` of this store shows the run, as it fills in."""
    url = run_url(store_key(store.url), run_id)
    if url is not None:
        out.print(f"view: {url}", highlight=False)


def _checked(flags: RunFlags, settings: FarmSettings) -> RunReport | None:
    """The options that contradict each other or name unusable paths, before anything runs;
    returns the --fail-on-regression baseline."""
    if flags.detach and (settings.embedded or flags.in_process):
        raise UsageError(
            "--detach needs a broker that outlives this command",
            fix="set MEMEVAL_BROKER_URL and start `memeval worker` processes",
        )
    check_output("--out", flags.out_dir, folder=True)
    if flags.out_dir is not None and (flags.out_dir / "report.json").is_dir():
        raise UsageError(
            f"--out {flags.out_dir} holds a folder named report.json, where the report goes",
            fix="remove that folder, or give --out another folder",
        )
    check_output("--json", flags.json_path)
    check_output("--md", flags.md_path)
    check_model_options(flags.budget_usd, flags.rate or [], flags.price or [])
    gate = flags.fail_on_regression
    baseline = load_report(gate) if gate else None
    if flags.detach and (flags.fail_under is not None or baseline is not None):
        raise UsageError(
            "--detach returns before the run ends, so it cannot gate on the result",
            fix="drop --detach, or check later with `memeval report` / `memeval compare`",
        )
    return baseline


def _estimate(flags: RunFlags) -> None:
    estimate_command(
        models=flags.model or DEFAULT_MODEL,
        suite=flags.suite or "all",
        only=flags.only,
        dimension=flags.dimension,
        limit=flags.limit,
        trials=flags.trials or 1,
        price=flags.price,
        base_url=flags.base_url,
        budget_usd=flags.budget_usd,
        **({"max_tokens": flags.max_tokens} if flags.max_tokens is not None else {}),
    )


def _plan(flags: RunFlags, farm: Executor, store: Store) -> PlannedRun:
    planned = _planned(flags, farm, store)
    _show_viewer(store, planned.run_id)
    if not out.is_terminal and not flags.detach:
        # A terminal shows the id on the progress bar; a log (CI, nohup, a pipe) would name
        # it only at the end, so a run killed mid-way left no id in it to resume by.
        resume = f"memeval run --resume {planned.run_id}"
        out.print(f"run {planned.run_id}: if it stops, `{resume}`", highlight=False, soft_wrap=True)
    return planned


def _planned(flags: RunFlags, farm: Executor, store: Store) -> PlannedRun:
    if flags.resume is None:
        request = flags.request()
        check_engine(request.engine, remote=farm.remote)
        return plan_new(store, request, out)
    if flags.names_a_new_run():
        raise UsageError(
            "--resume runs the cases of the run it names, with that run's options",
            fix="drop --engine/--suite/--label/--only/--dimension/--limit/--trials/--keep",
        )
    # An id, a label or `latest`, as `report`, `status` and `compare` take it.
    match = store.resolve_run(flags.resume)
    if (note := match.note(flags.resume)) is not None:
        out.print(note, highlight=False)
    # Local workers (or this process) run the cases: the engine is checked before the run
    # reopens.
    local = not farm.remote
    return plan_resume(store, match.record.id, flags.budget_usd, check_here=local, console=out)


def _conclude(
    end: RunEnd,
    store: Store,
    planned: PlannedRun,
    fail_under: float | None,
    baseline: RunReport | None,
    elapsed_s: float,
) -> None:
    """The summary, then the exit code the run's end calls for."""
    report = end.report
    if end.stop in (None, Stop.interrupted, Stop.broker):
        print_summary(report, out, elapsed_s)
    if end.stop is Stop.interrupted:
        resume = f"`memeval run --resume {report.run_id}`"
        if end.unwritten:
            out.print(
                f"[yellow]interrupted while the reports were written[/]: some may be missing; "
                f"{resume} writes them all",
                highlight=False,
            )
        else:
            out.print(f"[yellow]interrupted[/]: resume with {resume}", highlight=False)
        raise typer.Exit(INTERRUPTED)
    if end.error is not None:
        raise end.error
    refused = stopped(report.cases)
    if refused is not None:
        raise refused
    credits = outcome.credits_stop(report)
    if credits is not None:
        raise credits
    unfinished = outcome.unfinished(report)
    if unfinished and outcome.only_budget_stopped(report):
        record = require_run(store, report.run_id)
        cases = (job.case for job in planned.jobs())
        out.print(outcome.budget_reached(report, cases, record), highlight=False)
        raise typer.Exit(BUDGET_REACHED)
    if unfinished:
        out.print(
            f"[yellow]{plural(unfinished, 'case')} did not finish[/]: "
            f"resume with `memeval run --resume {report.run_id}`"
        )
        raise typer.Exit(1)
    for line in enforce_gates(report, fail_under=fail_under, baseline=baseline):
        out.print(line, highlight=False)
