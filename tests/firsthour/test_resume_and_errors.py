"""A newcomer's first hour (issue 29): resuming a benchmark run, resuming by label or
`latest`, install hints that keep their extra, and a model service that is not running.

Each command runs as a user runs it, through the entry point `python -m memeval` calls, against
a real SQLite store (`tests.cli_here`); the model service that is down is a real closed port."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
from pathlib import Path

import pytest

from memeval.cli import _fail
from memeval.models.local import library_missing
from memeval.suites.catalog import anchored
from tests.benchmarks.samples import LOCOMO, write
from tests.cli_here import run_cli_here
from tests.conftest import ROOT


def _closed_port() -> int:
    """A port nothing listens on: bound, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _forget_results(db: Path) -> None:
    """What an interrupted run leaves: no result yet, the run not finished."""
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM probe_results")
        connection.execute("DELETE FROM check_results")
        connection.execute("DELETE FROM case_results")
        connection.execute("UPDATE runs SET status = 'interrupted'")


@pytest.mark.parametrize("options", ["", "?categories=1,2,3,4,5"])
def test_a_locomo_run_stores_its_suite_as_typed_and_resumes_from_another_folder(tmp_path, options):
    here = tmp_path / "project"
    (here / "data").mkdir(parents=True)
    write(here / "data", "sample.json", LOCOMO)
    spec = f"locomo:data/sample.json{options}"
    _stored_as_typed_and_resumed(tmp_path, here, spec)


def test_a_folder_of_cases_is_stored_as_typed_and_resumes_from_another_folder(tmp_path):
    here = tmp_path / "project"
    shutil.copytree(ROOT / "fixtures" / "dimensions" / "temporal", here / "my-cases")
    _stored_as_typed_and_resumed(tmp_path, here, "my-cases/", cases=10)


def _stored_as_typed_and_resumed(tmp_path: Path, here: Path, spec: str, cases: int = 1) -> None:
    """The list, the report header and `status` show the suite as typed; `--resume` from
    another folder still finds its cases."""
    db = tmp_path / "memeval.db"
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{db}"}
    out = ("--out", str(tmp_path / "reports"))
    first = run_cli_here(
        "run", "--in-process", "--suite", spec, "--engine", "bm25", *out, cwd=here, env=env
    )
    assert first.returncode == 0, first.stderr
    with sqlite3.connect(db) as connection:
        (suite,) = connection.execute("SELECT suite FROM runs").fetchone()
    assert suite == spec
    listed = run_cli_here("runs", "--json", cwd=here, env=env)
    assert [r["suite"] for r in json.loads(listed.stdout)] == [spec]
    report = (tmp_path / "reports" / "report.md").read_text(encoding="utf-8")
    assert f"suite `{spec}`" in report

    _forget_results(db)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    resumed = run_cli_here(
        "run", "--resume", "latest", "--in-process", *out, cwd=elsewhere, env=env
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "unknown suite" not in resumed.stderr
    assert f"{cases} of {cases} case" in resumed.stdout
    status = run_cli_here("status", "latest", "--md", str(tmp_path / "status.md"), env=env,
                          cwd=elsewhere)  # fmt: skip
    assert status.returncode == 0, status.stderr
    assert f"suite `{spec}`" in (tmp_path / "status.md").read_text(encoding="utf-8")
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT suite FROM runs").fetchall() == [(spec,)]


def test_run_resume_takes_a_label_or_latest(tmp_path):
    db = tmp_path / "memeval.db"
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{db}"}
    only = "dimensions/temporal/cfo_on_date"
    args = ("run", "--in-process", "--engine", "naive", "--only", only, "--out", str(tmp_path))
    first = run_cli_here(*args, "--label", "nightly", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    for ref in ("nightly", "latest"):
        _forget_results(db)
        resumed = run_cli_here("run", "--resume", ref, "--in-process", cwd=tmp_path, env=env)
        assert resumed.returncode == 0, resumed.stderr
        assert "resuming" in resumed.stdout and "1 of 1 case to run" in resumed.stdout
    unknown = run_cli_here("run", "--resume", "nope", "--in-process", cwd=tmp_path, env=env)
    assert unknown.returncode == 2 and "no run `nope`" in unknown.stderr


def test_an_install_hint_keeps_its_extra(capsys):
    with pytest.raises(SystemExit) as stopped:
        _fail(library_missing("mem0-oss", "mem0", "mem0"))
    assert stopped.value.code == 2
    assert "pip install 'memeval[mem0]'" in capsys.readouterr().err


def test_a_model_service_that_is_down_is_named_with_a_fix(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'memeval.db'}"}
    model = ("--llm", "--model", "memeval/stand-in-chat", "--base-url", url)
    done = run_cli_here(
        "run", "--in-process", *model, "--dimension", "temporal", cwd=tmp_path, env=env
    )
    assert done.returncode == 2, done.stderr
    assert f"nothing answers at {url}" in done.stderr
    assert "fix:" in done.stderr and "memeval models serve" in done.stderr
    assert "Traceback" not in done.stderr


def test_estimate_offline_says_the_price_list_could_not_be_fetched(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    env = {"MEMEVAL_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "200"}
    args = ("estimate", "--model", "some/model", "--base-url", url, "--dimension", "temporal")
    done = run_cli_here(*args, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert f"the price list of {url} could not be fetched" in done.stdout
    priced = run_cli_here(*args, "--price", "some/model=1/2", cwd=tmp_path, env=env)
    assert "could not be fetched" not in priced.stdout


def test_a_named_suite_is_found_from_any_folder_as_named(tmp_path, monkeypatch):
    """`loop_guard` is a shipped suite run by name, not a folder of the working directory:
    anchoring it to the working folder made its runs unresumable."""
    monkeypatch.chdir(tmp_path)
    for name in ("all", "lifecycle", "loop_guard"):
        assert anchored(name) == name
    assert anchored("my-cases/") == str(tmp_path / "my-cases")
