"""`memeval.sweep`: two models over a few cases on the embedded farm (real Redis and Celery
workers, started by the API in a subprocess, as a user's script would) against a local
OpenRouter-speaking server, returning every run's report and the comparison; and bad input
refused before anything starts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import memeval
from memeval.errors import UsageError
from memeval.evaluation.planning import select
from memeval.llm.estimate import planned_calls
from memeval.llm.sweep import SweepReport
from memeval.results import CaseStatus
from memeval.suites.catalog import resolve
from tests.llm.server import KEY, FakeOpenRouter

ROOT = Path(__file__).resolve().parents[2]
MODELS = ["test/cheap", "test/dear"]
ONLY = ["cfo_on_date", "isolation"]


@pytest.fixture
def server() -> Iterator[FakeOpenRouter]:
    with FakeOpenRouter() as fake:
        yield fake


def swept(server: FakeOpenRouter, tmp_path: Path) -> SweepReport:
    """`memeval.sweep` in its own process: the farm's Celery client stays out of the test
    process, whose later forks a live kombu connection can hang."""
    database_url = f"sqlite:///{tmp_path / 'runs.db'}"
    script = textwrap.dedent(f"""
        import memeval
        report = memeval.sweep({MODELS!r}, budget_usd=50, suites="all", only={ONLY!r},
                               base_url={server.base_url!r}, farm="embedded", workers=1,
                               database_url={database_url!r})
        print(report.model_dump_json())
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMEVAL_", "OPENROUTER_"))}
    env |= {"OPENROUTER_API_KEY": KEY, "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "sweep " in done.stderr and "2 variants" in done.stderr  # progress went to stderr
    return SweepReport.model_validate_json(done.stdout.strip().splitlines()[-1])


def test_a_sweep_from_python_returns_each_runs_report_and_the_comparison(
    server: FakeOpenRouter, tmp_path: Path
) -> None:
    cases = select(resolve("all"), ONLY, [])
    report = swept(server, tmp_path)
    sid = report.sweep_id
    assert [run.variant.model for run in report.runs] == MODELS
    assert [run.report.run_id for run in report.runs] == [f"{sid}.0", f"{sid}.1"]
    for run in report.runs:
        assert sorted(c.case_id for c in run.report.cases) == sorted(c.id for c in cases)
        assert all(c.status is CaseStatus.done for c in run.report.cases)
        assert run.answers > 0 and run.model_answer is not None
    assert report.done == report.planned == len(MODELS) * len(cases) and report.errors == 0
    assert report.common == sorted(c.id for c in cases) and report.coverage == 1.0
    assert report.comparison is not None
    assert [g.name for g in report.comparison.groups] == MODELS
    # Every model answered every planned call, and the report spent what the server billed.
    assert len(server.calls) == len(planned_calls(cases)) * len(MODELS)
    assert round(report.spent_usd * 1e6) == server.billed_micros
    # The runs are runs in the store like any other.
    stored = memeval.load_run(f"{sid}.1", database_url=f"sqlite:///{tmp_path / 'runs.db'}")
    assert stored.label == f"{sid}/test/dear"
    assert {c.case_id: c.score for c in stored.cases} == {
        c.case_id: c.score for c in report.runs[1].report.cases
    }


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"models": "a/b,a/b"}, "model a/b is listed twice"),
        ({"budget_usd": 0}, "--budget-usd must be positive"),
        ({"profiles": ["x: --model m"]}, "profile `x`: cannot use `--model`"),
        ({"trials": 0}, "--trials"),
        ({"farm": "nowhere"}, "farm `nowhere` is neither `embedded` nor a broker URL"),
    ],
)
def test_bad_input_is_refused_before_any_run_exists(
    given: dict[str, object], says: str, tmp_path: Path
) -> None:
    database_url = f"sqlite:///{tmp_path / 'runs.db'}"
    arguments: dict[str, object] = {"models": "a/b", "budget_usd": 1, "suites": "lifecycle"}
    with pytest.raises(UsageError, match=re.escape(says)):
        memeval.sweep(**(arguments | given), database_url=database_url)  # type: ignore[arg-type]
    assert not (tmp_path / "runs.db").exists()
