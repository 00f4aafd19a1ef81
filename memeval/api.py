"""memeval from Python: evaluate an engine, sweep models, load a run, compare runs.

    import memeval
    report = memeval.evaluate("reference", suites="dimensions")
    print(report.composite)

`memeval run` is a thin layer over the same functions (`memeval.evaluation`), so a run made
here is a run in the results store like any other: `memeval report`, `memeval compare` and
`memeval run --resume` all take its id. Bad input raises `memeval.errors.UsageError` with a
`fix`; nothing here exits the interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from pydantic import BaseModel, Field, ValidationError
from rich.console import Console

from memeval.engines.base import Engine
from memeval.errors import UnknownRun, UsageError
from memeval.evaluation.engines import EngineArg, choose_engine
from memeval.evaluation.execution import Execution, Executor, InProcess, Pool, execute
from memeval.evaluation.models import ModelOptions
from memeval.evaluation.outcome import RunEnd, Stop
from memeval.evaluation.outputs import Outputs
from memeval.evaluation.paths import check_output
from memeval.evaluation.planning import (
    PlannedRun,
    RunRequest,
    concurrency,
    plan_new,
    plan_resume,
)
from memeval.evaluation.preflight import check_engine
from memeval.evaluation.selection import Selection
from memeval.evaluation.store import usable_store
from memeval.llm.prompt import MAX_TOKENS
from memeval.llm.setup import check_model_options, parse_models
from memeval.llm.sweep import SweepConfig, SweepReport, profiles_for, read_cases
from memeval.report.compare import CompareReport, GroupBy
from memeval.report.compare import compare as compare_reports
from memeval.report.source import load_report
from memeval.report.stats import RESAMPLES
from memeval.report.stored import fold
from memeval.results import RunReport
from memeval.store import Store, open_store

if TYPE_CHECKING:
    from memeval_farm.settings import FarmSettings

__all__ = ["ModelOptions", "compare", "evaluate", "load_run", "resume", "sweep"]

EMBEDDED = "embedded"

Llm: TypeAlias = bool | str | ModelOptions | None
RunRef: TypeAlias = str | RunReport


class _Numbers(BaseModel):
    """The numeric arguments, checked before anything starts; errors name the argument."""

    trials: int = Field(default=1, ge=1)
    budget_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    workers: int | None = Field(default=None, ge=1)


def evaluate(
    engine: EngineArg = "reference",
    suites: str = "all",
    *,
    only: str | Sequence[str] | None = None,
    dimension: str | Sequence[str] | None = None,
    limit: int | None = None,
    trials: int = 1,
    llm: Llm = None,
    budget_usd: float | None = None,
    rates: Sequence[str] | None = None,
    farm: str | None = None,
    label: str | None = None,
    keep: bool = False,
    workers: int | None = None,
    out: Path | str | None = None,
    database_url: str | None = None,
    console: Console | None = None,
) -> RunReport:
    """Run `suites` (lifecycle, dimensions, all, or a path) against `engine` and return the
    run's report, as `memeval run` would.

    `engine`: a registry reference ("reference", "http?url=...", "pkg.module:Class"), an
    `Engine` subclass, or an instance (in this process only). `farm`: None runs the cases in
    this process; "embedded" starts a private Redis and local workers; a broker URL sends them
    to a fleet's `memeval worker` processes. `llm`: True for the default answering model, a
    model id, or `ModelOptions`. `limit`: only the first N cases the selection holds, as
    `memeval run --limit`. `out`: also write report.md/.json/.html into this folder.
    Progress and warnings go to `console` (default: stderr).

    Cases that errored, were lost or were skipped for budget or credits are in the report,
    with their status, as `memeval run` reports them. What stops the run itself (the engine
    going down, the broker staying away) raises its `MemevalError`, and Ctrl-C re-raises,
    once the run is closed as interrupted: `resume(RUN_ID)` (or `memeval run --resume`)
    finishes it.
    """
    _check_numbers(trials=trials, budget_usd=budget_usd, workers=workers)
    folder = None if out is None else Path(out)
    check_output("out", folder, folder=True)
    shown = console or Console(stderr=True)
    chosen = choose_engine(engine, in_process=farm is None)
    where = _executor(farm)
    store = usable_store(database_url)
    try:
        if chosen.local is None:
            check_engine(chosen.ref, remote=where.remote)
        request = RunRequest(
            engine=chosen.ref,
            suite=suites,
            only=_listed(only),
            dimension=_listed(dimension),
            limit=limit,
            trials=trials,
            keep=keep,
            label=label,
            models=_model_options(llm, budget_usd, rates),
        )
        planned = plan_new(store, request, shown)
        end = _execute(where, store, planned, workers, shown, folder, chosen.local)
    finally:
        store.dispose()
    return _report(end)


def resume(
    run: str,
    *,
    engine: EngineArg | None = None,
    budget_usd: float | None = None,
    farm: str | None = None,
    workers: int | None = None,
    out: Path | str | None = None,
    database_url: str | None = None,
    console: Console | None = None,
) -> RunReport:
    """Finish a run that stopped (interrupted, cases errored or lost, the budget reached), as
    `memeval run --resume` does: only its unfinished cases run, with the run's own options,
    and the report covers the whole run. `run`: a run id, a label or `latest`.

    `engine` is needed only when the store cannot rebuild the run's engine: an instance, or a
    class defined in `__main__`; pass the same engine again. `budget_usd` raises the model
    budget the run reached.
    """
    _check_numbers(budget_usd=budget_usd, workers=workers)
    folder = None if out is None else Path(out)
    check_output("out", folder, folder=True)
    shown = console or Console(stderr=True)
    chosen = None if engine is None else choose_engine(engine, in_process=farm is None)
    local = None if chosen is None else chosen.local
    where = _executor(farm)
    store = usable_store(database_url)
    try:
        record = store.resolve_run(run).record
        if chosen is not None and chosen.ref != record.engine:
            raise UsageError(
                f"engine: run `{record.id}` ran {record.engine}, not {chosen.ref}",
                fix="pass the engine the run was started with, or leave engine out",
            )
        here = not where.remote and local is None
        planned = plan_resume(store, record.id, budget_usd, check_here=here, console=shown)
        end = _execute(where, store, planned, workers, shown, folder, local)
    finally:
        store.dispose()
    return _report(end)


def sweep(
    models: str | Sequence[str],
    budget_usd: float,
    suites: str = "all",
    *,
    engine: str = "reference",
    profiles: Sequence[str] | None = None,
    only: str | Sequence[str] | None = None,
    dimension: str | Sequence[str] | None = None,
    trials: int = 1,
    rates: Sequence[str] | None = None,
    prices: Sequence[str] | None = None,
    base_url: str | None = None,
    max_tokens: int = MAX_TOKENS,
    farm: str = EMBEDDED,
    workers: int | None = None,
    pool: Pool = "prefork",
    verbose: bool = False,
    database_url: str | None = None,
    console: Console | None = None,
) -> SweepReport:
    """Answer `suites` with several `models` under one budget on a farm, then compare them, as
    `memeval sweep` does (the command is a layer over this function). Each model (under each
    engine profile: `"small: --engine reference --k 3"`) is a run of its own in the store;
    the report holds every run's report and the comparison on the cases all of them completed.

    `models`: "a/model,b/model" or a list. `farm`: "embedded" (a private Redis and local
    workers) or a broker URL; a sweep's budget lives in the farm's Redis, so it never runs in
    this process. `rates`, `prices`, `base_url` and `max_tokens` are `memeval sweep`'s
    `--rate`, `--price`, `--base-url` and `--max-tokens`. Bad input raises `UsageError` before
    any run exists or any cent is spent; Ctrl-C returns the report with `interrupted` set, the
    runs holding what landed.
    """
    from memeval_farm.farm import connect
    from memeval_farm.settings import load_settings
    from memeval_farm.sweep import sweep as on_farm

    names = parse_models(models if isinstance(models, str) else ",".join(models))
    check_model_options(budget_usd, list(rates or []), list(prices or []))
    swept = profiles_for(_listed(profiles), engine)
    cases = read_cases(Selection(suite=suites, only=_listed(only), dimension=_listed(dimension)))
    try:
        config = SweepConfig(
            models=names,
            budget_usd=budget_usd,
            profiles=swept,
            suite=suites,
            trials=trials,
            rates=list(rates or []),
            prices=list(prices or []),
            base_url=base_url,
            max_tokens=max_tokens,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"--{first['loc'][0]}: {first['msg']}") from None
    settings = _farm_settings(load_settings(), farm)
    store = usable_store(database_url)
    try:
        return on_farm(
            config,
            cases,
            settings=settings,
            shared=connect(settings),
            store=store,
            console=console or Console(stderr=True),
            workers=concurrency(workers),
            pool=pool,
            verbose=verbose,
        )
    finally:
        store.dispose()


def _execute(
    where: Executor,
    store: Store,
    planned: PlannedRun,
    workers: int | None,
    console: Console,
    folder: Path | None,
    local: Engine | None,
) -> RunEnd:
    how = Execution(
        workers=concurrency(workers),
        console=console,
        outputs=None if folder is None else Outputs(out_dir=folder),
        engine=local,
    )
    return execute(where, store, planned, how)


def _report(end: RunEnd) -> RunReport:
    """What ended the run, raised as `evaluate` documents, or its report."""
    if end.stop is Stop.interrupted:
        raise KeyboardInterrupt
    if end.error is not None:
        raise end.error
    return end.report


def load_run(run: str, *, database_url: str | None = None) -> RunReport:
    """A run's report: by run id, label (the newest run holding it), `latest`, a report.json
    or the folder holding one. From the store it is folded afresh, resumed cases included."""
    try:
        return load_report(run, database_url)
    except UnknownRun:
        with open_store(database_url) as store:
            return fold(store, store.resolve_run(run).record)


def compare(
    baseline: RunRef,
    candidate: RunRef,
    *more: RunRef,
    by: GroupBy = GroupBy.label,
    resamples: int = RESAMPLES,
    database_url: str | None = None,
) -> CompareReport:
    """What `memeval compare` prints, as a model: each candidate against `baseline`, every
    difference called better, worse or within noise. Runs are reports or anything
    `load_run` takes; runs sharing a label (`by`) pool as repeats of one configuration."""
    reports = [
        each if isinstance(each, RunReport) else load_run(each, database_url=database_url)
        for each in (baseline, candidate, *more)
    ]
    return compare_reports(reports, baseline=reports[0].run_id, by=by, resamples=resamples)


def _check_numbers(**given: object) -> None:
    try:
        _Numbers.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = first["loc"][0]
        raise UsageError(
            f"{field}: {first['msg'].lower()}, not {given[str(field)]!r}",
            fix=f"give {field} a valid value, or leave it out",
        ) from None


def _executor(farm: str | None) -> Executor:
    """This process, or a farm: "embedded", or the fleet behind a broker URL. The farm, and
    Celery with it, is imported only when the cases go to one: an in-process run loads no part
    of Celery."""
    from memeval_farm.settings import load_settings

    settings = load_settings()
    if farm is None:
        from memeval_farm.redis_state import shared_for_process

        return InProcess(shared_for_process())
    from memeval_farm.executor import FarmExecutor

    connected: Executor = FarmExecutor.connected(_farm_settings(settings, farm))
    return connected


def _farm_settings(settings: FarmSettings, farm: str) -> FarmSettings:
    """The environment's farm settings, on the farm `farm` names."""
    from memeval_farm.settings import FarmSettings

    if farm != EMBEDDED and "://" not in farm:
        raise UsageError(
            f"farm `{farm}` is neither `{EMBEDDED}` nor a broker URL",
            fix="pass farm=None (this process), farm='embedded', or redis://HOST:6379/0",
        )
    broker = None if farm == EMBEDDED else farm
    return FarmSettings.model_validate(settings.model_dump() | {"broker_url": broker})


def _model_options(llm: Llm, budget_usd: float | None, rates: Sequence[str] | None) -> ModelOptions:
    if llm is None or llm is False:
        if budget_usd is not None:
            raise UsageError(
                "budget_usd only applies when a model answers",
                fix="pass llm=True (or a model id), or drop budget_usd",
            )
        return ModelOptions(rates=list(rates or []))
    given = llm if isinstance(llm, ModelOptions) else ModelOptions()
    if isinstance(llm, str):
        given = ModelOptions(model=llm)
    update: dict[str, object] = {"llm": True}
    if budget_usd is not None:
        update["budget_usd"] = budget_usd
    if rates:
        update["rates"] = list(rates)
    return given.model_copy(update=update)


def _listed(names: str | Sequence[str] | None) -> list[str]:
    """One name or several: a bare string is one name, not its letters."""
    return [names] if isinstance(names, str) else list(names or [])
