"""Farm commands: `memeval worker`, `memeval flower`, `memeval status RUN_ID`.

`worker` and `flower` are thin wrappers over Celery's own commands for our app, so every
Celery option still works after `--`; they refuse to start without a broker to share, since an
embedded broker lives only as long as the `memeval run` that started it.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from memeval.cli.options import Workers
from memeval.errors import UsageError
from memeval.evaluation.execution import Pool
from memeval.evaluation.paths import check_output
from memeval.evaluation.store import usable_store
from memeval.results import CaseStatus
from memeval.store import RunStatus

if TYPE_CHECKING:
    from memeval_farm.settings import FarmSettings

out = Console()
err = Console(stderr=True)


def _shared_broker() -> FarmSettings:
    from memeval_farm.settings import load_settings

    settings = load_settings()
    if settings.embedded:
        raise UsageError(
            "MEMEVAL_BROKER_URL is not set",
            fix="point it at the Redis `memeval run` dispatches to, e.g. redis://host:6379/0",
        )
    return settings


def worker(
    ctx: typer.Context,
    workers: Workers = None,
    concurrency: Annotated[int | None, typer.Option(hidden=True)] = None,
    pool: Annotated[Pool, typer.Option(help="Worker pool.")] = "prefork",
    loglevel: Annotated[str, typer.Option(help="Celery log level.")] = "INFO",
) -> None:
    """Run cases from the shared broker (a `celery worker` for memeval); extra args go to Celery."""
    settings = _shared_broker()
    concurrency = workers if workers is not None else concurrency  # --concurrency: its old name
    if concurrency is not None and concurrency < 1:
        raise UsageError(f"--workers must be at least 1, not {concurrency}")
    from memeval_farm import metrics

    metrics.prepare()  # before the app's tasks first touch prometheus-client
    usable_store()  # a worker that cannot store results would fail every case it takes
    from memeval_farm.app import app
    from memeval_farm.dispatch import check_broker

    check_broker(app)
    argv = ["worker", "--pool", pool, "--loglevel", loglevel, "--queues", settings.queue]
    if concurrency is not None:
        argv += ["--concurrency", str(concurrency)]
    if not any(a in ("-n", "--hostname") or a.startswith("--hostname=") for a in ctx.args):
        argv += ["--hostname", node_name()]
    started = time.monotonic()
    code = app.start(argv=[*argv, *ctx.args]) or 0
    if code == CELERY_CRASHED and time.monotonic() - started >= RESTART_AFTER_S:
        # Celery 5.7 can stop a worker for good on a broker outage (kombu closes the lost
        # connection twice and trips over its own teardown): a worker is infrastructure
        # that must outlive the broker, so it starts again, the same command in the same
        # process, and takes the queue up where it was.
        err.print("[yellow]the worker stopped on an error; starting it again[/]", highlight=False)
        while True:  # as Celery itself does, the worker waits for its broker
            try:
                check_broker(app)
                break
            except UsageError:
                time.sleep(RESTART_AFTER_S / 5)
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
    raise typer.Exit(code)


CELERY_CRASHED = 1  # Celery's exit code after an "Unrecoverable error"
RESTART_AFTER_S = 10.0  # a worker that fails sooner is misconfigured: restarting cannot help


def node_name() -> str:
    """`memeval-<pid>@<host>`: Celery's default, `celery@<host>`, is the same for every worker
    on a host, so Flower shows one of them and Celery warns of a duplicate node name."""
    return f"memeval-{os.getpid()}@{socket.gethostname()}"


def flower(
    ctx: typer.Context,
    port: Annotated[int, typer.Option(min=1, max=65535, help="HTTP port.")] = 5555,
    address: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    basic_auth: Annotated[
        str | None,
        typer.Option(
            help="user:password (comma-separated for several) required to see anything; "
            "set MEMEVAL_FLOWER_BASIC_AUTH instead to keep it out of `ps`.",
            envvar="MEMEVAL_FLOWER_BASIC_AUTH",
        ),
    ] = None,
) -> None:
    """Start Flower on the farm; search a run id to find its tasks. Extra args go to Flower."""
    _shared_broker()
    if basic_auth is not None and not all(":" in pair for pair in basic_auth.split(",")):
        raise UsageError("--basic-auth takes user:password", fix="e.g. --basic-auth admin:s3cret")
    from memeval_farm.app import app

    if basic_auth is None:
        err.print(
            "[yellow]warning:[/] Flower starts without authentication: anyone who reaches "
            f"{address}:{port} sees every task; set MEMEVAL_FLOWER_BASIC_AUTH=user:password",
            highlight=False,
        )
    auth = [f"--basic-auth={basic_auth}"] if basic_auth is not None else []
    app.start(["flower", f"--port={port}", f"--address={address}", *auth, *ctx.args])


def status(
    ref: Annotated[
        str,
        typer.Argument(
            metavar="RUN",
            help="A run id, a label or `latest` (the newest run); a label several runs share "
            "names the newest of them, and says so. `memeval runs` lists them.",
            show_default=False,
        ),
    ],
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the JSON report here.")
    ] = None,
    md_path: Annotated[
        Path | None, typer.Option("--md", help="Write the markdown report here.")
    ] = None,
) -> None:
    """Show a run's progress and scores so far, from the results store."""
    # Imported here: `memeval runs`, in this module too, needs none of the report stack.
    from memeval.cli.summary import print_summary
    from memeval.report.stored import fold
    from memeval.report.write import Format, render_as

    check_output("--json", json_path)
    check_output("--md", md_path)
    store = usable_store()
    match = store.resolve_run(ref)
    if (note := match.note(ref)) is not None:
        err.print(note, highlight=False)
    record, run_id = match.record, match.record.id
    report = fold(store, record)
    counts = ", ".join(f"{n} {s.value}" for s, n in sorted(record.counts.items())) or "none"
    out.print(
        f"[bold]{record.id}[/] {record.status.value}: {record.planned_count} planned, "
        f"{counts}, {len(report.missing)} missing"
    )
    if json_path is not None:
        json_path.write_text(render_as(report, Format.json))
    if md_path is not None:
        md_path.write_text(render_as(report, Format.md))
    if report.cases:
        print_summary(report, out)
    unfinished = report.missing or any(s is not CaseStatus.done for s in record.counts)
    if record.status is not RunStatus.running and unfinished:
        out.print(f"resume with `memeval run --resume {run_id}`")
