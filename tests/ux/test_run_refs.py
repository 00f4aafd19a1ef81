"""`report`, `status` and `compare` find a run by id, label or `latest`; `runs` names a run's
subset; `compare` prints tables with one verdict line; unmeasured spend shows a dash.

Every command runs as a user runs it, against a real SQLite store, through the entry point
`python -m memeval` calls but in this process (`tests.cli_here`): what is checked is how a run is
found and shown, which a process of its own would only make a second slower per command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text

from memeval.results import RunReport
from memeval.store import PlannedCase, open_store
from tests.cli_here import run_cli_here
from tests.report.factory import make_report

NAIVE_RATES = {"temporal": 0.3, "conflict": 0.2, "multihop": 0.5}
QUICK = ("--resamples", "200")


def _store_run(url: str, report: RunReport, label: str, subset: str | None = None) -> str:
    """Records `report` as a run labelled `label`; returns the label the store gave it."""
    with open_store(url) as store:
        record = store.create_run(
            run_id=report.run_id,
            label=label,
            engine=report.engine,
            suite=report.suite,
            planned=[
                PlannedCase(case_id=c.case_id, trial=c.trial, kind=c.kind, dimension=c.dimension)
                for c in report.cases
            ],
            subset=subset,
        )
        for case in report.cases:
            store.upsert_case_result(case)
        store.finish_run(report.run_id)
        return record.label


@pytest.fixture
def url(tmp_path: Path) -> str:
    """Three runs, oldest first: `base`, `base` again (stored as `base-2`), and `naive`."""
    url = f"sqlite:///{tmp_path / 'memeval.db'}"
    labels = [
        _store_run(url, make_report(label="base", run_id="r1-base", seed=1), "base"),
        _store_run(url, make_report(label="base", run_id="r2-base", seed=2), "base"),
        _store_run(
            url,
            make_report(label="naive", run_id="r3-naive", hit=0.4, rates=NAIVE_RATES, seed=3),
            "naive",
        ),
    ]
    assert labels == ["base", "base-2", "naive"]
    return url


def _json_report(ref: str, url: str) -> RunReport:
    shown = run_cli_here("report", ref, "--format", "json", "--database-url", url)
    assert shown.returncode == 0, shown.stderr
    return RunReport.model_validate_json(shown.stdout)


def test_report_takes_an_id_a_label_or_latest(url):
    assert _json_report("r1-base", url).run_id == "r1-base"
    assert _json_report("base", url).run_id == "r1-base"
    assert _json_report("base-2", url).run_id == "r2-base"
    assert _json_report("latest", url).run_id == "r3-naive"


def test_an_unknown_reference_exits_2_naming_it_and_memeval_runs(url, tmp_path):
    for args in (
        ("report", "nope", "--database-url", url),
        ("compare", "base", "nope", "--database-url", url),
    ):
        shown = run_cli_here(*args)
        assert shown.returncode == 2, shown.stderr
        assert "no run `nope`" in shown.stderr and "memeval runs" in shown.stderr
        assert "Traceback" not in shown.stderr
    status = run_cli_here("status", "nope", env={"MEMEVAL_DATABASE_URL": url})
    assert status.returncode == 2
    assert "no run `nope`" in status.stderr and "memeval runs" in status.stderr


def test_a_shared_label_names_the_newest_run_and_says_which(url):
    with open_store(url) as store, store.engine.begin() as connection:
        connection.execute(text("UPDATE runs SET label = 'dup' WHERE id IN ('r1-base', 'r2-base')"))
    shown = run_cli_here("report", "dup", "--format", "json", "--database-url", url)
    assert shown.returncode == 0, shown.stderr
    assert RunReport.model_validate_json(shown.stdout).run_id == "r2-base"
    assert "`dup` names 2 runs; using the newest, r2-base (older: r1-base)" in shown.stderr


def test_status_takes_a_label_and_latest(url):
    env = {"MEMEVAL_DATABASE_URL": url}
    by_label = run_cli_here("status", "base-2", env=env)
    assert by_label.returncode == 0, by_label.stderr
    assert by_label.stdout.startswith("r2-base finished")
    latest = run_cli_here("status", "latest", env=env)
    assert latest.returncode == 0, latest.stderr
    assert latest.stdout.startswith("r3-naive finished")


def test_compare_by_label_prints_tables_and_one_verdict_line(url, tmp_path):
    md = tmp_path / "cmp.md"
    args = ("compare", "base", "latest", "--md", str(md), "--database-url", url, *QUICK)
    shown = run_cli_here(*args)
    assert shown.returncode == 0, shown.stderr
    verdicts = [line for line in shown.stdout.splitlines() if " vs base: " in line]
    assert len(verdicts) == 1
    assert verdicts[0].startswith("naive vs base: clear regression — worse on composite")
    assert "- **" not in shown.stdout and "|---|" not in shown.stdout  # tables, not markdown
    # Latency moved both ways between these runs; it is shown, and never called worse.
    latency = _section(shown.stdout, "latency")
    assert latency and all("worse" not in row and "better" not in row for row in latency)
    written = md.read_text()
    assert written.startswith("# memeval compare")
    assert "- **naive vs base: clear regression — worse on composite" in written


def _section(table: str, group: str) -> list[str]:
    """The rows under a group's heading in a rich table, up to the next rule."""
    lines = table.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"│ {group} "))
    rows = []
    for line in lines[start + 1 :]:
        if not line.startswith("│   "):
            break
        rows.append(line)
    return rows


def _temporal_only(run_id: str) -> RunReport:
    report = make_report(label="t", run_id=run_id, scenarios=0, seed=4)
    report.cases = [c for c in report.cases if c.dimension == "temporal"]
    return report


def test_runs_names_the_subset_of_a_partial_suite(url):
    _store_run(url, _temporal_only("r4-temporal"), "t", subset="temporal only")
    # A run that did not record its subset is named by the dimensions its plan covers.
    _store_run(url, _temporal_only("r5-temporal"), "u")
    env = {"MEMEVAL_DATABASE_URL": url, "COLUMNS": "200"}
    listed = run_cli_here("runs", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {
        run: line for line in listed.stdout.splitlines() for run in line.split() if run[:1] == "r"
    }
    assert "all (temporal only)" in rows["r4-temporal"]
    assert "all (temporal only)" in rows["r5-temporal"]
    assert "all (" not in rows["r1-base"]
    as_json = {r["id"]: r for r in json.loads(run_cli_here("runs", "--json", env=env).stdout)}
    assert as_json["r4-temporal"]["subset"] == "temporal only"
    assert as_json["r1-base"]["subset"] is None
    status = run_cli_here("status", "t", env=env)
    assert "composite (temporal only)" in status.stdout
    assert "subset temporal only" in status.stdout
    report = run_cli_here("report", "t", "--database-url", url)
    assert "**Composite (temporal only) " in report.stdout
    assert "suite `all` (temporal only)" in report.stdout
