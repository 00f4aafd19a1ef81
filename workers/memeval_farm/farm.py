"""Runs a dispatched run, or every run of a sweep, to its end on the farm: embedded on this
machine, or on a fleet.

This process only dispatches, watches the store for results, and keeps the watchdog: it never
runs a case. On Ctrl-C it marks its runs interrupted (so a worker that missed the revoke skips
its case), revokes what has not landed, and lets the caller write the partial reports. It does
the same when the broker stays away longer than `MEMEVAL_BROKER_OUTAGE` (`BrokerGone`); a
shorter outage is waited out.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator

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

from memeval.errors import BrokerGone, MemevalError
from memeval.evaluation.execution import Pool
from memeval.evaluation.finalize import finalize
from memeval.evaluation.jobs import CaseJob, JobKey, Outgoing
from memeval.report.stored import ref_key, require_run
from memeval.store import RunStatus, Store
from memeval.summary import case_line, plural
from memeval_farm import metrics
from memeval_farm.broker import BROKER_FAULTS, Outage, identify, persistence_warning, quietly
from memeval_farm.config import make_app
from memeval_farm.dispatch import MB, Outbox, check_broker, chord_size, fleet_window, revoke, wait
from memeval_farm.embedded import EmbeddedFarm, tail
from memeval_farm.preflight import check_fleet
from memeval_farm.progress import Activity, CaseState, Landings
from memeval_farm.settings import FarmSettings, safe_url
from memeval_farm.watchdog import Watchdog


def connect(settings: FarmSettings) -> Celery | None:
    """The app on the shared broker, checked reachable; None when the farm is embedded."""
    if settings.embedded:
        return None
    app = make_app(settings)
    check_broker(app)
    return app


def preflight_fleet(
    app: Celery, settings: FarmSettings, store: Store, engines: dict[str, str], console: Console
) -> int:
    """Before any case is sent: each live worker checks each engine (`engines`: run id ->
    engine) and that its store holds the run. A refusal closes the runs as interrupted, so
    none is left `running`. Returns the cases the fleet runs at once (0 if none answered)."""
    identity = None
    with contextlib.suppress(*BROKER_FAULTS):
        identity = identify(str(app.conf.broker_url))
    warning = persistence_warning(identity, str(app.conf.broker_url))
    if warning is not None:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    firsts = {engine: run_id for run_id, engine in reversed(engines.items())}
    slots = 0
    try:
        for engine, run_id in firsts.items():
            slots = check_fleet(
                app,
                store,
                run_id,
                engine,
                timeout=settings.preflight_timeout,
                say=lambda text: console.print(text, highlight=False),
            )
    except BaseException:
        for each in sorted(engines):
            finalize(store, each, RunStatus.interrupted)
        raise
    return slots


def run_on_farm(
    settings: FarmSettings,
    shared: Celery | None,
    store: Store,
    run_id: str | list[str],
    jobs: Outgoing | list[CaseJob],
    *,
    workers: int,
    pool: Pool,
    console: Console,
    verbose: bool,
    before_dispatch: Callable[[str], None] | None = None,
    after_landing: Callable[[str], None] | None = None,
) -> None:
    """Until every case has a result, lost ones included. `shared` comes from `connect`;
    `run_id` is a run's id, or a sweep's run ids, whose jobs then go out interleaved as given.
    The cases are read from `jobs` as they are sent, `MEMEVAL_DISPATCH_WINDOW` of them in
    flight at most, so this process and the broker hold a window of case bodies, not a suite.

    `before_dispatch` gets the URL of the farm's Redis once it exists, so a run's budget can
    be opened where its workers will look for it before any of them starts a case;
    `after_landing` gets it once every case has landed, while an embedded Redis still lives."""
    outgoing = jobs if isinstance(jobs, Outgoing) else Outgoing.of(jobs)
    if not outgoing.keys:
        return
    if shared is not None:
        url = str(shared.conf.result_backend)
        slots = preflight_fleet(shared, settings, store, outgoing.engines, console)
        if before_dispatch is not None:
            before_dispatch(url)
        with long_lived():
            _drive(shared, settings, store, run_id, outgoing, console, verbose, slots)
        if after_landing is not None:
            after_landing(url)
        return
    # Workers may start elsewhere than here: hand them the store's absolute URL.
    env = {**os.environ, "MEMEVAL_DATABASE_URL": store.url.render_as_string(hide_password=False)}
    console.print(f"[dim]starting the embedded farm: redis + {workers} workers…[/]")
    with EmbeddedFarm(workers=workers, pool=pool, env=env) as farm:
        farm.start_workers()
        if before_dispatch is not None:
            before_dispatch(farm.url)
        app = make_app(settings, broker_url=farm.url)
        local = ([farm.node], farm.alive, farm.revive)
        with long_lived():
            _drive(app, settings, store, run_id, outgoing, console, verbose, workers, *local)
        if not farm.alive():
            console.print(
                f"[red]the local worker stopped[/]; its last words:\n{tail(farm.worker_log)}"
            )
        if after_landing is not None:
            after_landing(farm.url)


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """While the cases go out and land, the collector leaves alone what this process held
    before (its modules, the app, a caller's own data): a full collection over a heap that
    holds a suite paused the dispatcher 134 ms as it sent a run's first cases."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _drive(
    app: Celery,
    settings: FarmSettings,
    store: Store,
    run_id: str | list[str],
    outgoing: Outgoing,
    console: Console,
    verbose: bool,
    slots: int,
    nodes: list[str] | None = None,
    alive: Callable[[], bool] | None = None,
    revive: Callable[[], bool] | None = None,
) -> None:
    if isinstance(run_id, str):
        run_ids, title, labels = [run_id], run_id, {}
    else:
        run_ids, title = run_id, f"{len(run_id)} runs"
        # A sweep's runs share their case ids: each line names its run, by the run's label.
        labels = {each: f"{require_run(store, each).label}  " for each in run_id}
    landings = Landings(store, outgoing.keys)
    # The running count decodes every task event, three per case: a cost worth paying only
    # when someone watches the bar, not in CI logs or scripts, where it slowed a run by 8%.
    activity = Activity(app, set()) if console.is_terminal and not console.quiet else None
    if activity is not None:
        activity.start()
    broker = str(app.conf.broker_url)

    def say(text: str) -> None:
        console.print(text, highlight=False)

    say(f"[dim]dispatching {plural(len(outgoing.keys), 'case')}…[/]")
    try:
        identity = identify(broker)
        outbox = Outbox(app, run_id, outgoing.jobs, prefix=settings.key_prefix)
    except BROKER_FAULTS as exc:
        for each in run_ids:
            finalize(store, each, RunStatus.interrupted)
        raise unsendable(broker, exc) from None
    watchdog = Watchdog(
        app,
        queue=settings.queue,
        quiet_after=settings.quiet_after,
        task_ids=outbox.task_ids,
        outage=Outage(broker, patience=settings.broker_outage, say=say, revive=revive),
        identity=identity,
        nodes=nodes,
        alive=alive,
    )
    window = fleet_window(settings.dispatch_window, slots)
    size = chord_size(window)

    def room() -> bool:
        """Whether a chord more fits the window, by count and by the bytes in flight."""
        held = sum(outbox.sizes[key] for key in landings.waiting)
        return len(landings.waiting) + size <= window and held < settings.dispatch_window_mb * MB

    def top_up() -> None:
        """Send while the window has room for a chord; a broker fault is the watchdog's to
        wait out (it raises `BrokerGone` once patience runs out), and the cases read but not
        sent go with the next try."""
        try:
            while landings.unsent and room():
                landings.sent(outbox.send(size))
        except BROKER_FAULTS as exc:
            if not landings.waiting and not landings.landed and not outbox.task_ids:
                raise unsendable(broker, exc) from None
            watchdog.outage.failed(exc)
        if activity is not None:
            activity.task_ids.update(outbox.task_ids)

    progress = Progress(
        TextColumn(f"[bold]{title}"),
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

    watched = metrics.serve_dispatcher()
    caps = {each: require_run(store, each).options.get("budget_micros") for each in run_ids}

    def tick(new: list[tuple[JobKey, CaseState]]) -> None:
        if watched:
            try:
                depth = watchdog.queued()
            except BROKER_FAULTS:
                depth = 0  # the watchdog itself reports the outage
            for each in run_ids:
                landed = sum(k.run_id == each for k in landings.landed)
                metrics.dispatcher_saw(
                    run_id=each,
                    queue=settings.queue,
                    depth=depth,
                    planned=landings.planned[each],
                    landed=landed,
                    cap_micros=caps[each],
                )
        if verbose:
            for key, state in new:
                where = f"{labels.get(key.run_id, '')}{ref_key(key.case)}"
                line = case_line(state.status, state.score, where, state.error)
                console.print(line, highlight=False)
        progress.update(
            bar,
            completed=len(landings.landed),
            failed=landings.failed,
            running="–" if activity is None else activity.running,
        )

    try:
        with progress:
            lost = wait(landings, watchdog, settings.poll_interval, tick, top_up)
    except BrokerGone:
        for each in run_ids:
            finalize(store, each, RunStatus.interrupted)
        raise
    except (KeyboardInterrupt, MemevalError):  # Ctrl-C, or a suite that changed mid-run
        for each in run_ids:
            finalize(store, each, RunStatus.interrupted)
        quietly(lambda: revoke(app, outbox.task_ids, landings.waiting))
        raise
    finally:
        if activity is not None:
            activity.stop()
        # Celery's result objects of the chords sent unsubscribe over the broker when they are
        # collected: collect them now, while it is up. Left to the exit, after the embedded
        # Redis has stopped, each printed a traceback (seen when SIGTERM landed mid-send).
        gc.collect()
    if lost:
        _give_up(store, lost, landings.unsent, watchdog, console)


def unsendable(broker: str, exc: BaseException) -> BrokerGone:
    """The broker refused the run's first cases: nothing is in flight to wait for."""
    return BrokerGone(
        f"could not send the cases to the broker at {safe_url(broker)}: {exc}",
        fix="bring it back, then resume the run",
    )


def _give_up(
    store: Store, lost: set[JobKey], unsent: set[JobKey], watchdog: Watchdog, console: Console
) -> None:
    """Mark the lost cases, and those not sent yet, so every run closes and `memeval run
    --resume` sends them all again: a farm that loses cases is not one to keep feeding."""
    why = watchdog.reason if watchdog.broker_lost_them else "no worker holds them, none queued"
    marks = [(lost, watchdog.reason)]
    if unsent:
        marks.append((unsent, "not sent: the run stopped when the farm lost cases"))
    for keys, reason in marks:
        for each in sorted({key.run_id for key in keys}):
            store.mark_lost(each, [key.case for key in keys if key.run_id == each], reason)
    console.print(f"[red]{plural(len(lost), 'case')} lost[/]: {why}", highlight=False)
    if unsent:
        console.print(
            f"[red]{plural(len(unsent), 'case')} not sent[/]: marked lost, to resume",
            highlight=False,
        )
