"""A newcomer's first hour (issue 29): resuming a benchmark run, resuming by label or
`latest`, install hints that keep their extra, and a model service that is not running.

Each command runs as a user runs it, through the entry point `python -m memeval` calls, against
a real SQLite store (`tests.cli_here`); the model service that is down is a real closed port."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path

import pytest

from memeval.cli import _fail
from memeval.models.local import library_missing
from tests.benchmarks.samples import LOCOMO, write
from tests.cli_here import run_cli_here


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
def test_a_locomo_run_stores_its_suite_as_given_and_resumes_from_another_folder(tmp_path, options):
    here = tmp_path / "project"
    (here / "data").mkdir(parents=True)
    source = write(here / "data", "sample.json", LOCOMO)
    db = tmp_path / "memeval.db"
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{db}"}
    spec = f"locomo:data/sample.json{options}"
    first = run_cli_here(
        "run", "--in-process", "--suite", spec, "--engine", "bm25", cwd=here, env=env
    )
    assert first.returncode == 0, first.stderr
    with sqlite3.connect(db) as connection:
        (suite,) = connection.execute("SELECT suite FROM runs").fetchone()
    assert suite == f"locomo:{source.resolve()}{options}"
    listed = run_cli_here("runs", "--json", cwd=here, env=env)
    assert [r["suite"] for r in json.loads(listed.stdout)] == [suite]

    _forget_results(db)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    resumed = run_cli_here("run", "--resume", "latest", "--in-process", cwd=elsewhere, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert "unknown suite" not in resumed.stderr
    assert "resuming" in resumed.stdout and "1 of 1 case to run" in resumed.stdout


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
