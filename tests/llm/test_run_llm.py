"""`memeval run --llm` end to end: the embedded farm, a local OpenAI-compatible server, a budget."""

from __future__ import annotations

import json
import os

from memeval.results import RunReport
from tests.llm.server import KEY

SUITE = "tests/data/holdout_fixtures.yaml"


def run(cli, server, tmp_path, *extra: str):
    out = tmp_path / "out"
    done = cli(
        "run",
        "--suite",
        SUITE,
        "--llm",
        "--model",
        "test/cheap",
        "--base-url",
        server.base_url,
        "--out",
        str(out),
        "--workers",
        "2",
        *extra,
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}"},
    )
    report = out / "report.json"
    return done, (RunReport.model_validate_json(report.read_text()) if report.exists() else None)


def test_model_answers_every_query_within_budget(cli, server, tmp_path):
    done, report = run(cli, server, tmp_path, "--budget-usd", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report is not None
    answered = [q for c in report.cases for q in c.queries if q.model_answer is not None]
    assert answered, "no query got a model answer"
    spent = sum(c.answerer_usd_micros for c in report.cases)
    assert spent == server.billed_micros > 0
    assert spent <= 5_000_000
    for path in (tmp_path / "out").iterdir():
        assert KEY not in path.read_text(errors="ignore")
    assert KEY not in done.stdout + done.stderr


def test_a_budget_that_binds_still_finishes_the_run(cli, server, tmp_path):
    done, report = run(cli, server, tmp_path, "--budget-usd", "0.0005")
    assert report is not None, done.stderr
    statuses = {c.status.value for c in report.cases}
    assert "skipped_budget" in statuses
    assert not report.missing
    assert sum(c.answerer_usd_micros for c in report.cases) <= 500
    assert server.billed_micros <= 500
    assert "Traceback" not in done.stderr
    # The farm's run ends as test_budget_outcome's in-process one does: exit 5, a resume offered.
    assert done.returncode == 5, done.stdout + done.stderr
    assert f"--resume {report.run_id} --budget-usd" in done.stdout
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["run_id"] == report.run_id


def test_an_in_process_run_keeps_its_budget_in_memory_with_no_redis(cli, server, tmp_path):
    """No farm and no MEMEVAL_REDIS_URL: the budget lives in the process, and binds as exactly
    as on the farm."""
    assert "MEMEVAL_REDIS_URL" not in os.environ
    done, report = run(cli, server, tmp_path, "--budget-usd", "0.0015", "--in-process")
    assert done.returncode == 5, done.stdout + done.stderr
    assert report is not None
    assert "budget: $0.00, $0.0000 spent so far" in done.stdout  # $0.0015, opened in memory
    assert "skipped_budget" in {c.status.value for c in report.cases}
    spent = sum(c.answerer_usd_micros for c in report.cases)
    assert 0 < spent == server.billed_micros <= 1500
