"""`memeval answer`: a stored run answered and judged again from its packs, with the engine's
server stopped, on the farm and in process, with a budget and `--resume`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import SecretStr

from memeval.engines.reference import ReferenceEngine
from memeval.llm.reanswer import SOURCE_RUN
from memeval.results import CaseStatus, RunReport
from memeval.server import create_app
from memeval.store import open_store
from tests.adapters.fakes import running
from tests.llm.server import FakeOpenRouter

TOKEN = "answer-test-token"
SCENARIO = """
kind: scenario
name: ports-and-editors
title: Remembers a port and an editor
start: 2026-03-02
documents:
  - {id: d1, title: Billing, text: The billing service listens on port 8443.}
  - {id: d2, title: Editor, text: Dana writes code in the Helix editor.}
probes:
  - id: port
    question: Which port does the billing service listen on?
    style: lexical
    expect: ["8443"]
    tags: ["category:single-hop"]
  - id: editor
    question: Which editor does Dana write code in?
    style: lexical
    expect: ["Helix"]
    tags: ["category:single-hop"]
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "ports.yaml").write_text(SCENARIO)
    shutil.copy("tests/data/holdout_fixtures.yaml", folder / "fixtures.yaml")
    return folder


def env(tmp_path: Path) -> dict[str, str]:
    return {
        "MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}",
        "MEMEVAL_HTTP_TOKEN": TOKEN,
    }


def source_run(cli, server, tmp_path: Path, suite: Path, url: str, *where: str) -> RunReport:
    out = tmp_path / "source"
    done = cli(
        "run",
        "--engine",
        "http",
        "--url",
        url,
        "--suite",
        str(suite),
        "--llm",
        "--model",
        "test/cheap",
        "--base-url",
        server.base_url,
        "--out",
        str(out),
        "--workers",
        "2",
        *where,
        env=env(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return RunReport.model_validate_json((out / "report.json").read_text())


def answer(cli, server, tmp_path: Path, *args: str):
    out = tmp_path / "answered"
    done = cli("answer", *args, "--base-url", server.base_url, "--out", str(out), env=env(tmp_path))
    report = out / "report.json"
    return done, (RunReport.model_validate_json(report.read_text()) if report.exists() else None)


def scripted_judges(server: FakeOpenRouter) -> None:
    """`judge/a` accepts every answer, `judge/b` none: with the answering model's own word
    as the tie-break, a test can tell each judge's verdict apart."""
    server.prices |= {"judge/a": (1, 1), "judge/b": (1, 1)}
    replies = {"judge/a": "CORRECT", "judge/b": "WRONG"}
    server.script = lambda model, chat: replies.get(model)


@pytest.mark.parametrize("where", [(), ("--in-process",)], ids=["farm", "in-process"])
def test_answer_rejudges_a_stored_run_with_the_engine_stopped(cli, server, tmp_path, suite, where):
    scripted_judges(server)  # before the source run: model prices are cached from its look-up
    with running(create_app(ReferenceEngine(), SecretStr(TOKEN))) as url:
        source = source_run(cli, server, tmp_path, suite, url, *where)
    # the engine's server is gone: any engine call would now fail the case
    before = len(server.calls)
    done, report = answer(
        cli, server, tmp_path, source.run_id, "--model", "test/dear",
        "--judge", "judge/a", "--judge", "judge/b",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert report is not None and report.run_id != source.run_id
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record = store.get_run(report.run_id)
    assert record is not None and record.options[SOURCE_RUN] == source.run_id
    assert record.engine == source.engine
    assert {c.status for c in report.cases} == {CaseStatus.done}
    calls = server.calls[before:]
    assert {c.model for c in calls} == {"test/dear", "judge/a", "judge/b"}
    old = {(c.case_id, p.probe, p.phase): p for c in source.cases for p in c.probes}
    probes = [(c.case_id, p) for c in report.cases for p in c.probes]
    assert probes
    for case_id, p in probes:
        assert p.pack == old[case_id, p.probe, p.phase].pack  # the stored pack, unchanged
        assert p.model_answer is not None
        assert [v.model for v in p.judges] == ["judge/a", "judge/b"]
        assert [v.ok for v in p.judges] == [True, False]
        assert p.judge_ok is False  # one each: no majority for "correct"
    queries = [q for c in report.cases for q in c.queries if q.pack]
    assert queries and all(q.model_answer is not None for q in queries)
    answered = sum(1 for _ in probes) + len(queries)
    assert [c.model for c in calls].count("test/dear") == answered
    assert "Judge agreement" in (tmp_path / "answered" / "report.md").read_text()


def test_answer_stops_at_its_budget_and_resume_finishes(cli, server, tmp_path, suite):
    with running(create_app(ReferenceEngine(), SecretStr(TOKEN))) as url:
        source = source_run(cli, server, tmp_path, suite, url, "--in-process")
    before = server.billed_micros
    done, report = answer(
        cli, server, tmp_path, source.run_id, "--model", "test/cheap", "--budget-usd", "0.0005"
    )
    assert done.returncode == 5, done.stdout + done.stderr
    assert report is not None
    assert CaseStatus.skipped_budget in {c.status for c in report.cases}
    assert server.billed_micros - before <= 500
    kept = {c.case_id for c in report.cases if c.status is CaseStatus.done}
    done, finished = answer(cli, server, tmp_path, "--resume", report.run_id, "--budget-usd", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert finished is not None and finished.run_id == report.run_id
    assert {c.status for c in finished.cases} == {CaseStatus.done}
    assert kept <= {c.case_id for c in finished.cases}


def test_answer_needs_a_run(cli, server, tmp_path):
    done, _ = answer(cli, server, tmp_path, "no-such-run", "--model", "test/cheap")
    assert done.returncode == 2 and "no-such-run" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_a_case_the_suite_no_longer_holds_is_an_error_and_the_others_are_answered(
    cli, server, tmp_path, suite
):
    """The suite is read once as the cases are answered; what it no longer holds is found
    at the end of that pass."""
    with running(create_app(ReferenceEngine(), SecretStr(TOKEN))) as url:
        source = source_run(cli, server, tmp_path, suite, url, "--in-process")
    (suite / "ports.yaml").unlink()
    done, report = answer(cli, server, tmp_path, source.run_id, "--model", "test/cheap")
    assert done.returncode == 1, done.stdout + done.stderr
    assert report is not None and len(report.cases) == len(source.cases) > 1
    gone = [c for c in report.cases if c.status is not CaseStatus.done]
    assert [c.case_id for c in gone] == [c.case_id for c in source.cases if "ports" in c.case_id]
    assert gone[0].error == f"the suite no longer holds case {gone[0].case_id}"
