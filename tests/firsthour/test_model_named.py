"""Reports of an `--llm` run name the answering model and its prompt version, and the stand-in
chat model's scores carry their caveat (issue 29, item 11). The model is the real stand-in
service (`memeval models serve`'s app) on a local port; the run goes through the entry point
`python -m memeval` calls (`tests.cli_here`)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from memeval.llm.prompt import PROMPT_VERSION
from memeval.models import CHAT_MODEL
from tests.cli_here import run_cli_here


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    from memeval.models.server import running

    with running() as url:
        yield url


def test_an_llm_run_names_its_model_and_prompt_with_the_stand_in_caveat(model_url, tmp_path):
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'memeval.db'}", "COLUMNS": "200"}
    out = tmp_path / "reports"
    done = run_cli_here(
        "run", "--in-process", "--llm", "--model", CHAT_MODEL, "--base-url", model_url,
        "--only", "dimensions/temporal/cfo_on_date", "--out", str(out), cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    named = f"answers by {CHAT_MODEL} (prompt {PROMPT_VERSION})"
    printed = " ".join(done.stdout.split())
    assert named in printed and "measures the pack, not a model" in printed
    md = (out / "report.md").read_text()
    assert named in md and "measures the pack, not a model" in md
    assert named in (out / "report.html").read_text()
    report = json.loads((out / "report.json").read_text())
    assert report["answerer"] == {"model": CHAT_MODEL, "prompt_version": PROMPT_VERSION}
    assert report["judge"] is None


def test_a_run_without_a_model_names_none(tmp_path):
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'memeval.db'}"}
    out = tmp_path / "reports"
    done = run_cli_here(
        "run", "--in-process", "--only", "dimensions/temporal/cfo_on_date", "--out", str(out),
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "answers by" not in done.stdout and "answers by" not in (out / "report.md").read_text()
