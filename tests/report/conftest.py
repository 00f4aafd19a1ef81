"""Runs to report on and compare: hand-built ones whose differences are known in advance, and
real ones from the in-process runner on the built-in suites."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from memeval.evaluation.planning import RunPlan, select
from memeval.inprocess import run_plan
from memeval.report.stored import ref_key
from memeval.results import RunReport
from memeval.runner import RunOptions
from memeval.store import CaseKey
from memeval.suites.catalog import resolve
from memeval.summary import build_report
from tests.report.factory import make_report

NAIVE_RATES = {"temporal": 0.3, "conflict": 0.2, "multihop": 0.5}


@pytest.fixture(scope="session")
def reference_run():
    return make_report(label="reference", seed=1)


@pytest.fixture(scope="session")
def reference_rerun():
    """The same engine again: identical outcomes, different timings."""
    return make_report(label="reference-again", seed=2)


@pytest.fixture(scope="session")
def naive_run():
    return make_report(label="naive", engine="naive", hit=0.4, rates=NAIVE_RATES, seed=3)


def run_engine(engine: str, label: str, trials: int = 1) -> RunReport:
    """The built-in suites on a real engine, through the same `run_case` the farm uses."""
    suite = resolve("all")
    chosen = select(suite, [], [])
    plan = RunPlan(
        run_id=f"run-{label}",
        label=label,
        engine=engine,
        suite=suite.name,
        options=RunOptions(),
    )
    pairs = [(c, t) for t in range(trials) for c in chosen]
    results = asyncio.run(run_plan(plan, pairs))
    return build_report(
        run_id=plan.run_id,
        label=label,
        engine=engine,
        suite=plan.suite,
        started_at=plan.started_at,
        finished_at=datetime.now(UTC),
        cases=results,
        planned=[ref_key(CaseKey(case.id, trial)) for case, trial in pairs],
    )


@pytest.fixture(scope="session")
def real_reference():
    return run_engine("reference", "reference")


@pytest.fixture(scope="session")
def real_reference_again():
    return run_engine("reference", "reference-again", trials=2)


@pytest.fixture(scope="session")
def real_naive():
    return run_engine("naive", "naive")
