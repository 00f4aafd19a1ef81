"""How a run that met its budget ends: its own exit code, the calls it skipped, a resume only
with more money; a model timeout that can be set; a service that overbilled, said everywhere."""

from __future__ import annotations

import asyncio
import math

import pytest

from memeval.errors import UsageError
from memeval.llm.setup import model_timeout, prepare
from memeval.report.caveats import overbilling_note
from memeval.report.markdown import render as render_markdown
from memeval.report.stored import fold_run as load_report
from memeval.store import PlannedCase
from memeval.store.models import PaidCall, PaidState
from memeval.summary import plural
from tests.budget.paying import store_at
from tests.cli_here import run_cli_here
from tests.llm.test_run_llm import run

SPENT_OUT = 5


def test_a_spent_budget_exits_5_and_offers_only_a_larger_budget(cli, server, tmp_path):
    """In this process (`--in-process`): how a run ends is decided after its cases, the same
    wherever they ran; test_run_llm holds the embedded farm's run that binds to exit 5 too."""
    done, report = run(cli, server, tmp_path, "--budget-usd", "0.0005", "--in-process")
    assert report is not None, done.stdout + done.stderr
    assert done.returncode == SPENT_OUT, done.stdout + done.stderr
    skipped = sum(c.status.value == "skipped_budget" for c in report.cases)
    assert (
        skipped
        and "budget reached: " in done.stdout
        and f"({plural(skipped, 'case')})" in done.stdout
    )
    calls = int(done.stdout.split("budget reached: ")[1].split(" call")[0])
    assert calls >= skipped  # every skipped case had at least one call left to make
    assert f"--resume {report.run_id} --budget-usd" in done.stdout
    assert "did not finish" not in done.stdout

    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}"}
    smaller = run_cli_here("run", "--resume", report.run_id, "--budget-usd", "0.0001", env=env)
    assert smaller.returncode == 2 and "larger --budget-usd" in smaller.stdout + smaller.stderr
    billed = server.billed_micros
    larger = cli(
        "run", "--resume", report.run_id, "--budget-usd", "5", "--out", str(tmp_path / "r"),
        "--in-process", env=env,
    )  # fmt: skip
    assert larger.returncode == 0, larger.stdout + larger.stderr
    assert "$5.00" in larger.stdout and server.billed_micros > billed


def test_the_model_timeout_comes_from_the_option_or_the_environment(server, monkeypatch):
    monkeypatch.delenv("MEMEVAL_MODEL_TIMEOUT", raising=False)
    assert model_timeout(None) == 60.0 and model_timeout(7.5) == 7.5
    monkeypatch.setenv("MEMEVAL_MODEL_TIMEOUT", "12")
    assert model_timeout(None) == 12.0 and model_timeout(3) == 3.0
    setup = asyncio.run(prepare(["test/cheap"], base_url=server.base_url))
    assert setup.specs["test/cheap"].timeout_s == 12.0
    for bad in ("0", "-1", "soon", "inf"):
        monkeypatch.setenv("MEMEVAL_MODEL_TIMEOUT", bad)
        with pytest.raises(UsageError, match="MEMEVAL_MODEL_TIMEOUT"):
            model_timeout(None)
    with pytest.raises(UsageError, match="--model-timeout"):
        model_timeout(math.nan)


def test_a_bad_model_timeout_exits_2_before_the_run(server, tmp_path):
    done = run_cli_here(
        "run", "--suite", "tests/data/holdout_fixtures.yaml", "--llm", "--model", "test/cheap",
        "--base-url", server.base_url, "--model-timeout", "0",
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}"},
    )  # fmt: skip
    assert done.returncode == 2 and "--model-timeout" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_an_overbilling_service_is_named_in_the_report(tmp_path):
    store = store_at(tmp_path)
    plan = [PlannedCase(case_id="c", kind="fixture")]
    run_id = store.create_run(label="r", engine="naive", suite="s", planned=plan).id
    for call_id, charged in (("a", 90), ("b", 700), ("c", 350)):
        store.record_paid_call(
            PaidCall(call_id=call_id, run_id=run_id, model="m", state=PaidState.billed,
                     held_micros=300, charged_micros=charged)
        )  # fmt: skip
    report = load_report(store, run_id)
    assert (report.overbilled_calls, report.overbilled_usd_micros) == (2, 450)
    note = overbilling_note(report)
    assert note is not None and "$0.000450" in note and "2 calls" in note
    assert "$0.000450 above the budget's holds" in render_markdown(report)
    report.overbilled_calls = 0
    assert overbilling_note(report) is None
