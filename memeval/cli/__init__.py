"""The `memeval` command. Errors a user can fix print as one message, never a traceback."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console
from sqlalchemy.exc import DatabaseError

from memeval.cli import engines as engines_cmd
from memeval.cli import estimate as estimate_cmd
from memeval.cli import farm as farm_cmd
from memeval.cli import models as models_cmd
from memeval.cli import report as report_cmd
from memeval.cli import run as run_cmd
from memeval.cli import suites as suites_cmd
from memeval.cli import sweep as sweep_cmd
from memeval.cli.store import store_error
from memeval.errors import MemevalError
from memeval.secrets import install_masking, redact

app = typer.Typer(
    name="memeval",
    help="Measure how AI-agent memory systems fail: lifecycle scenarios and dimension fixtures.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(suites_cmd.app, name="suites")
app.add_typer(models_cmd.app, name="models")
app.command("run")(run_cmd.run)
app.command("report")(report_cmd.report)
app.command("compare")(report_cmd.compare_runs)
app.command("sweep")(sweep_cmd.sweep_command)
app.command("estimate")(estimate_cmd.estimate_command)
_PASSTHROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}
app.command("worker", context_settings=_PASSTHROUGH)(farm_cmd.worker)
app.command("flower", context_settings=_PASSTHROUGH)(farm_cmd.flower)
app.command("status")(farm_cmd.status)
app.command("runs")(farm_cmd.runs)
app.command("engines")(engines_cmd.engines)
app.command("serve")(engines_cmd.serve)
app.command("conformance")(engines_cmd.conformance)

err = Console(stderr=True)


def main() -> None:
    install_masking()
    try:
        app()
    except DatabaseError as exc:
        # `report` and `compare` reach the store through the report loaders, which open it
        # themselves; a store that is not a database is still the user's setting to fix.
        _fail(store_error(exc))
    except MemevalError as exc:
        _fail(exc)


def _fail(exc: MemevalError) -> NoReturn:
    err.print(f"[bold red]error:[/] {redact(exc.render())}", highlight=False, soft_wrap=True)
    sys.exit(exc.exit_code)
