"""Runs a dispatched run to its end on the farm: embedded on this machine, or on a fleet.

This process only dispatches, watches the store for results, and keeps the watchdog: it never
runs a case. On Ctrl-C it marks the run interrupted (so a worker that missed the revoke skips
its case), revokes what has not landed, and lets the caller write the partial report.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from celery import Celery
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from memeval.store import CaseKey, RunStatus, Store
from workers.aggregate import finalize
from workers.config import make_app
from workers.dispatch import check_broker, dispatch, revoke, wait
from workers.embedded import EmbeddedFarm, Pool, tail
from workers.job import CaseJob, ref_key
from workers.progress import Activity, CaseState, Landings
from workers.settings import FarmSettings
from workers.watchdog import Watchdog


def connect(settings: FarmSettings) -> Celery | None:
    """The app on the shared broker, checked reachable; None when the farm is embedded."""
    if settings.embedded:
        return None
    app = make_app(settings)
    check_broker(app)
    return app


def run_on_farm(
    settings: FarmSettings,
    shared: Celery | None,
    store: Store,
    run_id: str,
    jobs: list[CaseJob],
    *,
    workers: int,
    pool: Pool,
    console: Console,
    verbose: bool,
    before_dispatch: Callable[[str], None] | None = None,
) -> None:
    """Until every case has a result, lost ones included. `shared` comes from `connect`.

    `before_dispatch` gets the URL of the farm's Redis once it exists, so a run's budget can
    be opened where its workers will look for it before any of them starts a case."""
    if not jobs:
        return
    if shared is not None:
        if before_dispatch is not None:
            before_dispatch(str(shared.conf.result_backend))
        _drive(shared, settings, store, run_id, jobs, console, verbose)
        return
    # Workers may start elsewhere than here: hand them the store's absolute URL.
    env = {**os.environ, "MEMEVAL_DATABASE_URL": store.url.render_as_string(hide_password=False)}
    with EmbeddedFarm(workers=workers, pool=pool, env=env) as farm:
        farm.start_workers()
        if before_dispatch is not None:
            before_dispatch(farm.url)
        app = make_app(settings, broker_url=farm.url)
        _drive(app, settings, store, run_id, jobs, console, verbose, [farm.node], farm.alive)
        if not farm.alive():
            console.print(
                f"[red]the local worker stopped[/]; its last words:\n{tail(farm.worker_log)}"
            )


def _drive(
    app: Celery,
    settings: FarmSettings,
    store: Store,
    run_id: str,
    jobs: list[CaseJob],
    console: Console,
    verbose: bool,
    nodes: list[str] | None = None,
    alive: Callable[[], bool] | None = None,
) -> None:
    landings = Landings(store, run_id, [job.key for job in jobs])
    # The running count decodes every task event, three per case: a cost worth paying only
    # when someone watches the bar, not in CI logs or scripts, where it slowed a run by 8%.
    activity = Activity(app, set()) if console.is_terminal and not console.quiet else None
    if activity is not None:
        activity.start()
    task_ids = dispatch(app, run_id, jobs)
    if activity is not None:
        activity.task_ids.update(task_ids)
    watchdog = Watchdog(
        app,
        queue=settings.queue,
        quiet_after=settings.quiet_after,
        task_ids=task_ids,
        nodes=nodes,
        alive=alive,
    )
    progress = Progress(
        TextColumn(f"[bold]{run_id}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("failed {task.fields[failed]}  running {task.fields[running]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    bar = progress.add_task("cases", total=landings.total, failed=0, running=0)

    def tick(new: list[tuple[CaseKey, CaseState]]) -> None:
        if verbose:
            for key, state in new:
                score = "–" if state.score is None else f"{state.score:.2f}"
                console.print(f"{state.status.value:>6} {score:>5}  {ref_key(key)}")
        progress.update(
            bar,
            completed=len(landings.landed),
            failed=landings.failed,
            running="–" if activity is None else activity.running,
        )

    try:
        with progress:
            lost = wait(landings, watchdog, settings.poll_interval, tick)
    except KeyboardInterrupt:
        finalize(store, run_id, RunStatus.interrupted)
        revoke(app, task_ids, landings.waiting)
        raise
    finally:
        if activity is not None:
            activity.stop()
    if lost:
        store.mark_lost(run_id, lost)
        console.print(f"[red]{len(lost)} cases lost[/]: no worker holds them and none is queued")
