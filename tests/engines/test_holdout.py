"""Cases written apart from the reference engine's development: a check that it generalises
beyond the shipped suites, and that the naive baseline stays clearly below it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memeval.evaluation.planning import RunPlan
from memeval.inprocess import run_plan
from memeval.report.stored import ref_key
from memeval.results import RunReport
from memeval.runner import RunOptions
from memeval.store import CaseKey
from memeval.suites.loader import load_paths
from memeval.summary import build_report

DATA = Path(__file__).resolve().parent.parent / "data"


def run(engine: str, name: str) -> RunReport:
    cases = {c.case.id: c.case for c in load_paths([DATA / name])}
    plan = RunPlan(
        run_id="holdout",
        label=engine,
        engine=engine,
        suite=name,
        options=RunOptions(),
    )
    pairs = [(case, 0) for case in cases.values()]
    results = asyncio.run(run_plan(plan, pairs))
    return build_report(
        run_id="holdout",
        label=engine,
        engine=engine,
        suite=name,
        started_at=datetime.now(UTC),
        finished_at=None,
        cases=results,
        planned=[ref_key(CaseKey(case.id, trial)) for case, trial in pairs],
    )


def kpi(report: RunReport, name: str) -> float | None:
    return next(k.value for k in report.kpis if k.name == name)


@pytest.fixture(scope="module")
def fixtures() -> dict[str, RunReport]:
    return {e: run(e, "holdout_fixtures.yaml") for e in ("reference", "naive")}


def test_reference_generalises_on_unseen_fixtures(fixtures):
    ref = fixtures["reference"]
    assert ref.composite is not None and ref.composite >= 0.9, ref.dimensions


def test_naive_stays_below_reference_on_every_dimension(fixtures):
    ref, naive = fixtures["reference"], fixtures["naive"]
    assert naive.composite is not None and naive.composite <= 0.5
    for dim, score in naive.dimensions.items():
        assert score is not None and score < (ref.dimensions[dim] or 0.0), dim


def test_reference_on_an_unseen_scenario():
    ref = run("reference", "holdout_scenario.yaml")
    assert kpi(ref, "pack_hit") == 1.0
    assert kpi(ref, "fresh_first") == 1.0
    assert kpi(ref, "leaks") == 0.0
    naive = run("naive", "holdout_scenario.yaml")
    assert (kpi(naive, "leaks") or 0.0) > 0.0
    assert (kpi(naive, "mrr") or 0.0) < (kpi(ref, "mrr") or 0.0)
