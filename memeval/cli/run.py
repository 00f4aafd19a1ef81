"""`memeval run`: plan the cases, run them on the farm, fold the results, write the reports.

Without `MEMEVAL_BROKER_URL` the farm is embedded: a private Redis and a local worker node live
for this command only. With it, this command only dispatches and waits (or, with `--detach`,
prints the run id and leaves the work to `memeval worker` processes anywhere). Either way each
case is a task on its own tenant, and the store, not the broker, holds the results.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from memeval.cli.estimate import estimate_command
from memeval.cli.model_options import (
    DEFAULT_MODEL,
    ModelPlan,
    in_process_redis,
    paid_so_far,
    plan_models,
)
from memeval.cli.options import BaseUrl, ModelTimeout, Prices, Rates
from memeval.cli.paths import check_output
from memeval.cli.report import FailOnRegression, FailUnder
from memeval.cli.stop import stop_gently_on_sigterm
from memeval.cli.store import usable_store
from memeval.cli.summary import print_summary
from memeval.engines.base import CreditsExhausted, EngineUnavailable
from memeval.engines.registry import parse_ref, with_options
from memeval.errors import CreditsOut, MemevalError, UsageError
from memeval.llm.estimate import skipped_calls
from memeval.llm.setup import budget_micros
from memeval.plan import CaseRef, RunPlan, new_run_id, select
from memeval.report import default_out_dir, write_reports
from memeval.report.gate import enforce_gates
from memeval.report.source import load_report
from memeval.report.stored import require_run
from memeval.results import CaseResult, CaseStatus, RunReport
from memeval.runner import RunOptions
from memeval.store import RunRecord, RunStatus, Store
from memeval.suites.catalog import resolve
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario
from workers.aggregate import finalize
from workers.broker import BrokerGone
from workers.dispatch import dispatch
from workers.embedded import Pool
from workers.farm import check_engine, connect, preflight_fleet, run_on_farm
from workers.halt import NOT_RUN
from workers.job import CaseJob, plan_run
from workers.redis_state import redis_state
from workers.settings import load_settings

out = Console()
BUDGET_REACHED = 5
INTERRUPTED = 130


def run(
    engine: Annotated[
        str | None,
        typer.Option(help="Engine to evaluate: reference, naive, ... [default: reference]"),
    ] = None,
    url: Annotated[
        str | None, typer.Option(help="Base URL of the engine's service (e.g. for --engine http).")
    ] = None,
    enrich_wait: Annotated[
        float | None,
        typer.Option(help="cortex, tinyhumans: most seconds to wait for enrichment to drain."),
    ] = None,
    suite: Annotated[
        str | None,
        typer.Option(help="lifecycle, dimensions, all, or a path. [default: all]"),
    ] = None,
    label: Annotated[str | None, typer.Option(help="Name for this run in reports.")] = None,
    only: Annotated[
        list[str] | None, typer.Option(help="Run only this case id (repeatable).")
    ] = None,
    dimension: Annotated[
        list[str] | None, typer.Option(help="Run only fixtures of this dimension (repeatable).")
    ] = None,
    trials: Annotated[int | None, typer.Option(help="Run every case this many times.")] = None,
    keep: Annotated[
        bool, typer.Option(help="Skip the forget step, to inspect the engine.")
    ] = False,
    verbose: Annotated[bool, typer.Option(help="Print each case as it lands.")] = False,
    workers: Annotated[
        int | None, typer.Option(help="Local worker processes (or threads). [default: CPUs]")
    ] = None,
    pool: Annotated[Pool, typer.Option(help="Local worker pool.")] = "prefork",
    detach: Annotated[
        bool, typer.Option(help="Dispatch, print the run id and return (needs a broker).")
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option(help="Send a run's missing, lost and errored cases again.", metavar="RUN_ID"),
    ] = None,
    in_process: Annotated[
        bool, typer.Option("--in-process", help="Debug: run in this process, no farm.")
    ] = False,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Report folder. [default: ./memeval-runs/<label>/]"),
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write the JSON report here.")
    ] = None,
    md_path: Annotated[
        Path | None, typer.Option("--md", help="Also write the markdown report here.")
    ] = None,
    llm: Annotated[
        bool, typer.Option("--llm", help="A model answers every probe and query from its pack.")
    ] = False,
    model: Annotated[
        str | None, typer.Option(help=f"The answering model. [default: {DEFAULT_MODEL}]")
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            help="With --llm: this model grades every answer against the gold one, on the "
            "same budget (KPI judge_answer; prompt judge-v1).",
            metavar="MODEL",
        ),
    ] = None,
    base_url: BaseUrl = None,
    max_tokens: Annotated[int | None, typer.Option(help="Completion cap per answer.")] = None,
    budget_usd: Annotated[
        float | None, typer.Option(help="Most the answering model may spend on this run.")
    ] = None,
    price: Prices = None,
    rate: Rates = None,
    model_timeout: ModelTimeout = None,
    dry_run: Annotated[
        bool, typer.Option(help="Print the expected model calls and dollars, then stop.")
    ] = False,
    fail_under: FailUnder = None,
    fail_on_regression: FailOnRegression = None,
) -> None:
    """Run the suites against an engine and print a summary.

    Exit codes: 0 all cases done, 1 some case errored, lost or missing, 2 bad input,
    3 composite below --fail-under, 4 regression against --fail-on-regression, 5 the model
    budget was reached (the calls it could not pay for are skipped; `--resume RUN_ID
    --budget-usd LARGER` answers them), 6 the engine's credits ran out (402), 130 interrupted.
    """
    stop_gently_on_sigterm()
    settings = load_settings()
    concurrency = _workers(workers)
    if detach and (settings.embedded or in_process):
        raise UsageError(
            "--detach needs a broker that outlives this command",
            fix="set MEMEVAL_BROKER_URL and start `memeval worker` processes",
        )
    check_output("--out", out_dir, folder=True)
    if out_dir is not None and (out_dir / "report.json").is_dir():
        raise UsageError(
            f"--out {out_dir} holds a folder named report.json, where the report goes",
            fix="remove that folder, or give --out another folder",
        )
    check_output("--json", json_path)
    check_output("--md", md_path)
    baseline = load_report(fail_on_regression) if fail_on_regression else None
    if detach and (fail_under is not None or baseline is not None):
        raise UsageError(
            "--detach returns before the run ends, so it cannot gate on the result",
            fix="drop --detach, or check later with `memeval report` / `memeval compare`",
        )
    if dry_run:
        estimate_command(
            models=model or DEFAULT_MODEL,
            suite=suite or "all",
            only=only,
            dimension=dimension,
            trials=trials or 1,
            price=price,
            base_url=base_url,
            budget_usd=budget_usd,
            **({"max_tokens": max_tokens} if max_tokens is not None else {}),
        )
        return
    shared = None if in_process else connect(settings)
    store = usable_store()
    models = ModelPlan(llm=None, rates=[], budget_micros=None)
    if resume is not None:
        given = (engine, url, enrich_wait, suite, label, only, dimension, trials)
        if any(v is not None for v in given) or keep:
            raise UsageError(
                "--resume runs the cases of the run it names, with that run's options",
                fix="drop --engine/--suite/--label/--only/--dimension/--trials/--keep",
            )
        if shared is None:  # local workers: check the engine before the run reopens
            check_engine(require_run(store, resume).engine, remote=False)
        jobs, record = _resume(store, resume)
        run_id, run_label = resume, record.label
        cap = _resumed_budget(store, record, budget_usd)
        if jobs and jobs[0].options.llm is not None:
            models = ModelPlan(
                llm=jobs[0].options.llm,
                rates=jobs[0].options.rates,
                budget_micros=cap,
                spent_micros=paid_so_far(store, resume, jobs[0].options.llm.budget_scopes),
                raise_cap=budget_usd is not None,
            )
    else:
        # `--engine ""` is a mistake to report, not a request for the default engine.
        engine = with_options(
            "reference" if engine is None else engine, url=url, enrich_wait=enrich_wait
        )
        check_engine(engine, remote=shared is not None)
        run_id = new_run_id()
        run_label = label or f"{parse_ref(engine).name}-{run_id}"
        models = plan_models(
            run_id=run_id,
            llm=llm,
            model=model,
            base_url=base_url,
            max_tokens=max_tokens,
            prices=price or [],
            rates=rate or [],
            budget_usd=budget_usd,
            console=out,
            judge=judge,
            model_timeout=model_timeout,
        )
        options = RunOptions(keep=keep, llm=models.llm, rates=models.rates)
        jobs = _plan(
            store,
            run_id,
            run_label,
            engine,
            suite or "all",
            only,
            dimension,
            trials,
            options,
            models.budget_micros,
        )

    if detach and shared is not None:
        opener = models.opener(out)
        if opener is not None:
            opener(str(shared.conf.result_backend))
        if jobs:
            preflight_fleet(shared, settings, store, jobs, out)
            dispatch(shared, run_id, jobs)
        out.print(run_id)
        return
    try:
        if in_process:
            redis_url = in_process_redis(models)
            opener = models.opener(out)
            if opener is not None and redis_url is not None:
                opener(redis_url)
            _run_in_process(store, run_id, jobs, concurrency, verbose, redis_url)
        else:
            run_on_farm(
                settings,
                shared,
                store,
                run_id,
                jobs,
                workers=concurrency,
                pool=pool,
                console=out,
                verbose=verbose,
                before_dispatch=models.opener(out),
            )
    except KeyboardInterrupt:
        report = finalize(store, run_id, RunStatus.interrupted)
        _write(report, out_dir, run_label, json_path, md_path)
        print_summary(report, out)
        out.print(f"[yellow]interrupted[/]: resume with `memeval run --resume {run_id}`")
        raise typer.Exit(INTERRUPTED) from None
    except EngineUnavailable as exc:
        _write(
            finalize(store, run_id, RunStatus.interrupted), out_dir, run_label, json_path, md_path
        )
        raise MemevalError(
            f"the engine is unavailable: {exc}", fix=f"then `memeval run --resume {run_id}`"
        ) from exc
    except BrokerGone as exc:
        report = finalize(store, run_id, RunStatus.interrupted)
        _write(report, out_dir, run_label, json_path, md_path)
        print_summary(report, out)
        raise MemevalError(exc.message, fix=f"{exc.fix}: `memeval run --resume {run_id}`") from None
    except CreditsExhausted as exc:  # only `--in-process` sees it: workers store it as results
        _write(
            finalize(store, run_id, RunStatus.interrupted), out_dir, run_label, json_path, md_path
        )
        raise credits_out(str(exc), run_id) from None
    report = finalize(store, run_id)
    _write(report, out_dir, run_label, json_path, md_path)
    print_summary(report, out)
    stopped = [c for c in report.cases if c.status is CaseStatus.skipped_credits]
    if stopped:  # quote a case that met the 402, not one skipped because of it
        met = [c.error for c in stopped if c.error and not c.error.startswith(NOT_RUN)]
        raise credits_out((met or [stopped[0].error or "402"])[0], run_id, len(stopped))
    unfinished = sum(c.status is not CaseStatus.done for c in report.cases) + len(report.missing)
    if unfinished and _only_budget_stopped(report):
        _budget_reached(report, jobs, require_run(store, run_id))
    if unfinished:
        out.print(
            f"[yellow]{unfinished} cases did not finish[/]: "
            f"resume with `memeval run --resume {run_id}`"
        )
        raise typer.Exit(1)
    for line in enforce_gates(report, fail_under=fail_under, baseline=baseline):
        out.print(line, highlight=False)


def credits_out(reason: str, run_id: str, skipped: int | None = None) -> CreditsOut:
    """The run stopped because the engine cannot be paid: one message, its own exit code."""
    count = "" if skipped is None else f"; {skipped} cases skipped"
    return CreditsOut(
        f"credits exhausted: {reason}{count}",
        fix=f"top up the engine's account, then `memeval run --resume {run_id}`",
    )


def _only_budget_stopped(report: RunReport) -> bool:
    return not report.missing and all(
        c.status in (CaseStatus.done, CaseStatus.skipped_budget) for c in report.cases
    )


def _budget_reached(report: RunReport, jobs: list[CaseJob], record: RunRecord) -> None:
    """A run that spent its budget did what it was asked: not an error, and a plain resume
    would find no money either, so only a larger budget is offered."""
    calls = skipped_calls([job.case for job in jobs], report.cases)
    cases = sum(c.status is CaseStatus.skipped_budget for c in report.cases)
    cap = record.options.get("budget_micros")
    within = f" within the ${cap / 1e6:.4f} budget" if cap else ""
    out.print(
        f"[yellow]budget reached: {calls} calls skipped[/] ({cases} cases){within}; to answer "
        f"them: `memeval run --resume {record.id} --budget-usd LARGER`",
        highlight=False,
    )
    raise typer.Exit(BUDGET_REACHED)


def _resumed_budget(store: Store, record: RunRecord, budget_usd: float | None) -> int | None:
    """The run's budget, or the larger one this resume gives it (stored for later resumes)."""
    recorded = record.options.get("budget_micros")
    if budget_usd is None:
        return recorded
    cap = budget_micros(budget_usd)
    if recorded is None or cap is None or cap <= recorded:
        had = "has no budget" if recorded is None else f"has a ${recorded / 1e6:g} budget"
        raise UsageError(
            f"--budget-usd on --resume raises a run's budget, and run `{record.id}` {had}",
            fix="give a larger --budget-usd, or drop it to resume within the run's own",
        )
    store.update_run_options(record.id, {"budget_micros": cap})
    return cap


def _workers(workers: int | None) -> int:
    if workers is None:
        return os.cpu_count() or 1
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, not {workers}")
    return workers


def _plan(
    store: Store,
    run_id: str,
    label: str,
    engine: str,
    spec: str,
    only: list[str] | None,
    dimension: list[str] | None,
    trials: int | None,
    options: RunOptions,
    budget: int | None,
) -> list[CaseJob]:
    if trials is not None and trials < 1:
        raise UsageError(f"--trials must be at least 1, not {trials}")
    return plan_run(
        store,
        run_id=run_id,
        label=label,
        engine=engine,
        suite=spec,
        cases=select(resolve(spec), only or [], dimension or []),
        trials=trials or 1,
        options=options,
        budget_micros=budget,
    )


def _resume(store: Store, run_id: str) -> tuple[list[CaseJob], RunRecord]:
    """The run's cases without a done result, rebuilt from its suite; reopens the run."""
    record = require_run(store, run_id)
    missing = store.missing_cases(run_id)
    cases: dict[str, Scenario | Fixture] = {}
    if missing:
        cases = {located.case.id: located.case for located in resolve(record.suite).cases}
    gone = sorted({p.case_id for p in missing} - cases.keys())
    if gone:
        raise UsageError(
            f"run `{run_id}` needs cases its suite `{record.suite}` no longer holds: "
            + ", ".join(gone),
            fix="restore those case files, or start a new run",
        )
    options = RunOptions.model_validate(record.options)
    store.reopen_run(run_id)
    jobs = [
        CaseJob(
            run_id=run_id,
            engine=record.engine,
            case=cases[p.case_id],
            trial=p.trial,
            options=options,
        )
        for p in missing
    ]
    out.print(f"resuming {run_id}: {len(jobs)} of {record.planned_count} cases to run")
    return jobs, record


def _run_in_process(
    store: Store,
    run_id: str,
    jobs: list[CaseJob],
    concurrency: int,
    verbose: bool,
    redis_url: str | None,
) -> None:
    """The debugging path: the same runner in this process's event loop, same store."""
    from memeval.inprocess import run_plan
    from memeval.llm.answer import PaidCalls

    if not jobs:
        return
    plan = RunPlan(
        run_id=run_id,
        label=run_id,
        engine=jobs[0].engine,
        suite="",
        options=jobs[0].options,
        cases=[CaseRef(case_id=job.case.id, trial=job.trial) for job in jobs],
    )

    def landed(result: CaseResult) -> None:
        store.upsert_case_result(result)
        if verbose:
            score = "–" if result.score is None else f"{result.score:.2f}"
            out.print(f"{result.status.value:>6} {score:>5}  {result.case_id}#{result.trial}")

    cases = {job.case.id: job.case for job in jobs}
    ledger = PaidCalls(run_id, store.record_paid_call)
    asyncio.run(
        run_plan(
            plan,
            cases,
            concurrency=concurrency,
            on_result=landed,
            shared=redis_state(redis_url),
            ledger=ledger,
        )
    )


def _write(
    report: RunReport,
    out_dir: Path | None,
    label: str,
    json_path: Path | None,
    md_path: Path | None,
) -> None:
    """report.md, report.json and report.html in the run's folder, plus any copies asked for."""
    paths = write_reports(report, out_dir or default_out_dir(label))
    for copy, source in ((json_path, paths["json"]), (md_path, paths["md"])):
        if copy is not None:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
    out.print(f"reports: {paths['html'].parent}", highlight=False)
