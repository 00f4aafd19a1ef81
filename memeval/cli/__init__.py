"""The `memeval` command. Errors a user can fix print as one message, never a traceback.

Command modules load only when their command runs (`memeval.cli.lazy`): `memeval --help` lists
them from the table below, so each entry's help is its command's first help paragraph (a test
holds them equal).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, NoReturn, TypeGuard

import typer

from memeval import __version__
from memeval.cli.lazy import Entry, flags_show_no_type, lazy_group
from memeval.errors import MemevalError
from memeval.secrets import install_masking, redact

if TYPE_CHECKING:
    from sqlalchemy.exc import DatabaseError

COMMANDS = {
    "run": Entry("run", "run", "Run the suites against an engine and print a summary."),
    "report": Entry(
        "report",
        "report",
        "Regenerate a run's report from the results store; to stdout unless --out is given.",
    ),
    "compare": Entry(
        "report",
        "compare_runs",
        "Say which differences between runs are real: better, worse, or within noise.",
    ),
    "sweep": Entry(
        "sweep",
        "sweep_command",
        "Answer the suites with several models under one budget on the farm, then compare them.",
    ),
    "answer": Entry(
        "answer",
        "answer_command",
        "Answer and judge a stored run again from its packs, without calling its engine.",
    ),
    "estimate": Entry(
        "estimate",
        "estimate_command",
        "Print the expected model calls, tokens and dollars per model; nothing is spent.",
    ),
    "worker": Entry(
        "farm",
        "worker",
        "Run cases from the shared broker (a `celery worker` for memeval); "
        "extra args go to Celery.",
        passthrough=True,
    ),
    "flower": Entry(
        "farm",
        "flower",
        "Start Flower on the farm; search a run id to find its tasks. Extra args go to Flower.",
        passthrough=True,
    ),
    "status": Entry(
        "farm", "status", "Show a run's progress and scores so far, from the results store."
    ),
    "runs": Entry("runs", "runs", "List the runs in the results store, newest first."),
    "kpis": Entry("kpis", "kpis", "Say what every KPI means and what its `n` counts."),
    "engines": Entry(
        "engines",
        "engines",
        "List installed engines: what each supports and which settings it reads.",
    ),
    "serve": Entry(
        "engines",
        "serve",
        "Serve an engine over memeval's REST protocol (OpenAPI at /openapi.json).",
    ),
    "conformance": Entry(
        "engines",
        "conformance",
        "Check that a server speaks memeval's protocol, enforces auth and keeps tenants apart.",
    ),
    "suites": Entry("suites", "app", "List, validate and describe suites."),
    "view": Entry(
        "view",
        "view",
        "Browse the results store in a local web viewer: live runs, cases, compare, leaderboard.",
    ),
    "models": Entry(
        "models", "app", "Stand-in models for engines built on an LLM and an embedder."
    ),
}

flags_show_no_type()
app = typer.Typer(
    name="memeval",
    cls=lazy_group(COMMANDS),
    help="Measure how AI-agent memory systems fail: lifecycle scenarios and dimension fixtures.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"memeval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """The root options; each command is its own module."""


def main() -> None:
    install_masking()
    try:
        app()
    except MemevalError as exc:
        _fail(exc)
    except Exception as exc:
        # `report` and `compare` reach the store through the report loaders, which open it
        # themselves; a store that is not a database is still the user's setting to fix.
        if not _is_database_error(exc):
            raise
        from memeval.evaluation.store import store_error

        _fail(store_error(exc))


def _is_database_error(exc: Exception) -> TypeGuard[DatabaseError]:
    """Without importing SQLAlchemy: only a command that loaded it can have raised its error."""
    database = sys.modules.get("sqlalchemy.exc")
    return database is not None and isinstance(exc, database.DatabaseError)


def _fail(exc: MemevalError) -> NoReturn:
    from rich.console import Console
    from rich.markup import escape

    # The message is text, not markup: `pip install 'memeval[mem0]'` must keep its extra.
    Console(stderr=True).print(
        f"[bold red]error:[/] {escape(redact(exc.render()))}", highlight=False, soft_wrap=True
    )
    sys.exit(exc.exit_code)
