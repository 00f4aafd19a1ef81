"""A free model (price 0, or below a micro-dollar a call) under a budget: its holds are zero,
and zero must settle, release and lapse in the budget's Lua like any other amount. Before,
Lua wrote the negated zero hold as `-0`, Redis refused it, and every case errored."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from memeval.cli.summary import print_summary
from memeval.report.markdown import render
from memeval.results import CaseStatus
from memeval.runner import failed_result
from memeval.suites.catalog import resolve
from memeval.summary import build_report, case_line
from memeval_farm.budget import Budget, connect_redis
from tests.model_service import model_service

FARM_ENV = ("MEMEVAL_BROKER_URL", "MEMEVAL_DATABASE_URL", "MEMEVAL_RESULT_BACKEND")


def test_zero_holds_reserve_settle_release_and_lapse(redis_url: str, tag: str) -> None:
    async def go() -> None:
        redis = await connect_redis(redis_url)
        scope = f"run:{tag}"
        budget = Budget(redis, [scope])
        await budget.open(scope, 20_000)
        free = await budget.reserve(0)
        assert free is not None and free.amount_micros == 0
        assert await budget.settle(free, 0) == 0
        released = await budget.reserve(0)
        assert released is not None
        await budget.release(released)
        billed = await budget.reserve(0)  # sub-micro prices round up to 1 micro once billed
        assert billed is not None
        assert await budget.settle(billed, 1) == 1  # above a zero hold: counted, and it closes
        lapse = f"{scope}:lapse"
        short = Budget(redis, [lapse])
        await short.open(lapse, 10)
        held = await short.reserve(0, lease_s=0.001)
        await asyncio.sleep(0.05)
        assert await short.reserve(0) is not None  # sweeps the lapsed zero hold first
        assert held is not None and (await short.state(lapse)).reserved_micros == 0
        state = await budget.state(scope)
        assert (state.spent_micros, state.reserved_micros, state.calls) == (1, 0, 2)
        await redis.aclose()

    asyncio.run(go())


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    """`memeval models serve --port 0`: the stand-in chat model, which costs nothing."""
    with model_service() as (url, _):
        yield url


@pytest.mark.parametrize("price", [[], ["--price", "memeval/stand-in-chat=0/0"]])
def test_a_free_model_with_a_budget_runs_every_case(
    stand_in: str, tmp_path: Path, price: list[str]
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in FARM_ENV}
    env["MEMEVAL_DATABASE_URL"] = f"sqlite:///{tmp_path}/s.db"
    done = subprocess.run(
        [sys.executable, "-m", "memeval", "run", "--llm", "--model", "memeval/stand-in-chat",
         "--base-url", stand_in, "--budget-usd", "0.02", "--dimension", "temporal",
         "--workers", "2", "--out", str(tmp_path / "out"), "--json", str(tmp_path / "r.json"),
         *price],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert len(report["cases"]) == 10
    assert {c["status"] for c in report["cases"]} == {"done"}, [c["error"] for c in report["cases"]]


def test_every_case_errors_reason_reaches_the_terminal() -> None:
    cases = [c.case for c in resolve("dimensions").cases[:3]]
    now = datetime.now(UTC)
    why = ["ResponseError: the budget script failed", "engine said no", "engine said no"]
    results = [
        failed_result(c, run_id="r", trial=0, engine="naive", reason=r, started_at=now)
        for c, r in zip(cases, why, strict=True)
    ]
    report = build_report(
        run_id="r", label="r", engine="naive", suite="dimensions", started_at=now,
        finished_at=now, cases=results, planned=[f"{c.id}#0" for c in cases],
    )  # fmt: skip
    console = Console(width=200, record=True)
    print_summary(report, console)
    shown = console.export_text()
    assert "error (1 case): ResponseError: the budget script failed" in shown, shown
    assert "error (2 cases): engine said no" in shown, shown
    line = case_line(CaseStatus.error, None, "x#0", "ResponseError: the budget\nscript")
    assert line.endswith("ResponseError: the budget[/]"), line


def test_the_share_of_model_spend_that_reached_a_score_is_reported() -> None:
    cases = [c.case for c in resolve("dimensions").cases[:2]]
    now = datetime.now(UTC)
    scored = failed_result(cases[0], run_id="r", trial=0, engine="naive", reason="",
                           started_at=now, status=CaseStatus.done)  # fmt: skip
    scored.error, scored.score, scored.answerer_usd_micros = None, 1.0, 300
    skipped = failed_result(cases[1], run_id="r", trial=0, engine="naive", reason="budget",
                            started_at=now, status=CaseStatus.skipped_budget)  # fmt: skip
    skipped.answerer_usd_micros = 700
    report = build_report(
        run_id="r", label="r", engine="naive", suite="dimensions", started_at=now,
        finished_at=now, cases=[scored, skipped], planned=[f"{c.id}#0" for c in cases],
    )  # fmt: skip
    console = Console(width=200, record=True)
    print_summary(report, console)
    said = "model spend: 30.0% of $0.0010 reached a score; $0.0007 bought answers"
    assert said in console.export_text()
    assert "M" + said[1:] in render(report)
