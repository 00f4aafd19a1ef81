"""Ctrl-C while the reports are written (issue 29, item 4): the run ends `interrupted`, never
`finished` without its reports, says so, and `memeval run --resume` writes them.

The run is real (the reference engine in this process, a real SQLite store); the interrupt is
a real SIGINT, raised once the markdown is written, where a user's Ctrl-C lands during a large
suite's seconds of writing."""

from __future__ import annotations

import io
import signal
import sqlite3
from pathlib import Path

import pytest
import typer
from rich.console import Console

from memeval.cli import run as run_command
from memeval.evaluation.execution import Execution, InProcess, execute
from memeval.evaluation.outcome import Stop
from memeval.evaluation.outputs import Outputs
from memeval.evaluation.planning import RunRequest, plan_new
from memeval.llm.in_memory import MemoryState
from memeval.report.write import Format, render_as
from memeval.results import RunReport
from memeval.store import open_store
from tests.cli_here import run_cli_here

ONLY = ["dimensions/temporal/cfo_on_date", "dimensions/temporal/card_limit_after_changes"]


class InterruptedWhileWriting(Outputs):
    """Writes report.md, then Ctrl-C arrives before the JSON and HTML."""

    def write(self, report: RunReport, label: str, console: Console) -> Path:
        assert self.out_dir is not None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        (self.out_dir / "report.md").write_text(render_as(report, Format.md))
        signal.raise_signal(signal.SIGINT)
        raise AssertionError("SIGINT did not interrupt the writing")


def _status(db: Path) -> str:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT status FROM runs").fetchone()[0]


@pytest.fixture
def ctrl_c_interrupts():
    """SIGINT raises KeyboardInterrupt, as in a `memeval` process, whatever pytest set."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_while_writing_reports_leaves_the_run_interrupted_and_resumable(
    tmp_path, capsys, ctrl_c_interrupts
):
    db, out = tmp_path / "memeval.db", tmp_path / "reports"
    url = f"sqlite:///{db}"
    console = Console(file=io.StringIO())
    with open_store(url) as store:
        planned = plan_new(store, RunRequest(only=ONLY, label="big"), console)
        farm = InProcess(MemoryState().opener())
        how = Execution(workers=1, outputs=InterruptedWhileWriting(out_dir=out), console=console)
        end = execute(farm, store, planned, how)
        assert end.stop is Stop.interrupted and end.unwritten
        assert _status(db) == "interrupted"
        assert (out / "report.md").is_file() and not (out / "report.json").exists()
        assert not list(out.glob(".*.part"))  # nothing half-written left behind

        with pytest.raises(typer.Exit) as stopped:
            run_command._conclude(end, store, planned, None, None, 1.0)
        assert stopped.value.exit_code == run_command.INTERRUPTED
    said = " ".join(capsys.readouterr().out.split())
    assert "interrupted while the reports were written" in said
    assert f"`memeval run --resume {planned.run_id}` writes them all" in said

    listed = run_cli_here("runs", "--json", env={"MEMEVAL_DATABASE_URL": url})
    assert '"status": "interrupted"' in listed.stdout

    resumed = run_cli_here(
        "run", "--resume", "big", "--in-process", "--out", str(out), cwd=tmp_path,
        env={"MEMEVAL_DATABASE_URL": url},
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert "0 of 2 cases to run" in resumed.stdout
    assert _status(db) == "finished"
    written = RunReport.model_validate_json((out / "report.json").read_text())
    assert written.run_id == planned.run_id and len(written.cases) == 2
    assert (out / "report.html").is_file()
