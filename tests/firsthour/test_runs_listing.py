"""`memeval runs` (issue 29, item 13): a score column, one whole line per run at 80 columns and
in a pipe, and how many runs the limit hides. Runs are stored in a real SQLite store and
listed through the entry point `python -m memeval` calls (`tests.cli_here`)."""

from __future__ import annotations

import json
import re

import pytest

from memeval.report.numbers import pct
from memeval.results import RunReport
from memeval.store import PlannedCase, open_store
from tests.cli_here import run_cli_here
from tests.report.factory import make_report

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LABELS = ("reference-20261205-002613-5e7901", "naive-20261205-002614-aaaaaa", "nightly")


def _store(url: str, report: RunReport) -> None:
    with open_store(url) as store:
        store.create_run(
            run_id=report.run_id,
            label=report.label,
            engine=report.engine,
            suite="/a/rather/long/folder/of/cases/that/would/wrap/at/eighty/columns",
            planned=[
                PlannedCase(case_id=c.case_id, trial=c.trial, kind=c.kind, dimension=c.dimension)
                for c in report.cases
            ],
        )
        for case in report.cases:
            store.upsert_case_result(case)
        store.finish_run(report.run_id)


@pytest.fixture
def stored(tmp_path) -> tuple[str, list[RunReport]]:
    url = f"sqlite:///{tmp_path / 'memeval.db'}"
    reports = [
        make_report(label=label, run_id=f"2026120{i}-000000-{i:06d}", seed=i, hit=0.3 + i / 10)
        for i, label in enumerate(LABELS, start=1)
    ]
    for report in reports:
        _store(url, report)
    return url, reports


def _lines(url: str, *args: str, terminal: bool) -> list[str]:
    env = {"MEMEVAL_DATABASE_URL": url, "COLUMNS": "80"} | (
        {"FORCE_COLOR": "1"} if terminal else {}
    )
    done = run_cli_here("runs", *args, env=env)
    assert done.returncode == 0, done.stderr
    return [ANSI.sub("", line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("terminal", [True, False])
def test_every_run_is_one_line_with_its_id_label_and_score(stored, terminal):
    url, reports = stored
    lines = _lines(url, terminal=terminal)
    for report in reports:
        (line,) = [line for line in lines if report.run_id in line]
        assert report.label in line.split()
        assert pct(report.composite) in line.split()
    if terminal:
        assert max(len(line) for line in lines) <= 80
    else:
        suite = "/a/rather/long/folder/of/cases/that/would/wrap/at/eighty/columns"
        assert all(suite in line for line in lines if re.match(r"\d{8}-", line))


def test_the_runs_the_limit_hides_are_counted(stored):
    url, reports = stored
    lines = _lines(url, "--limit", "1", terminal=False)
    assert any(reports[-1].run_id in line for line in lines)
    assert not any(reports[0].run_id in line for line in lines)
    assert "2 more: `memeval runs --limit 3` lists every run" in lines
    assert not any("more:" in line for line in _lines(url, terminal=False))


def test_json_holds_the_score(stored):
    url, reports = stored
    env = {"MEMEVAL_DATABASE_URL": url}
    done = run_cli_here("runs", "--json", env=env)
    listed = {r["id"]: r["score"] for r in json.loads(done.stdout)}
    for report in reports:
        assert listed[report.run_id]["composite"] == pytest.approx(report.composite)
