"""The whole built-in suite scores the same however it runs: the runner called in this
process, the embedded farm, and `memeval worker` processes on the machine's Redis. Ordering,
processes and redelivery are the farm's business; none of them may move a score."""

from __future__ import annotations

import asyncio

from memeval.evaluation.planning import RunPlan, new_run_id
from memeval.inprocess import run_plan
from memeval.report.stored import ref_key
from memeval.runner import RunOptions
from memeval.store import CaseKey
from memeval.suites.catalog import resolve
from memeval.summary import build_report
from tests.farm.conftest import Farm, stop


def scores(report: dict) -> dict[str, object]:
    """Everything a score is made of; not timings, tenants or run ids."""
    return {
        "composite": report["composite"],
        "dimensions": report["dimensions"],
        "missing": report["missing"],
        "cases": {
            f"{c['case_id']}#{c['trial']}": {
                "status": c["status"],
                "score": c["score"],
                "checks": [(k["query"], k["kind"], k["value"], k["status"]) for k in c["checks"]],
                "probes": [(p["probe"], p["phase"], p["hit"], p["rank"]) for p in c["probes"]],
            }
            for c in report["cases"]
        },
    }


def direct() -> dict[str, object]:
    """The runner in this process, folded into a report as the chord callback folds one."""
    suite = resolve("all")
    cases = {located.case.id: located.case for located in suite.cases}
    plan = RunPlan(
        run_id=new_run_id(),
        label="direct",
        engine="reference",
        suite="all",
        options=RunOptions(),
    )
    pairs = [(case, 0) for case in cases.values()]
    results = asyncio.run(run_plan(plan, pairs))
    report = build_report(
        run_id=plan.run_id,
        label=plan.label,
        engine=plan.engine,
        suite=plan.suite,
        started_at=plan.started_at,
        finished_at=None,
        cases=results,
        planned=[ref_key(CaseKey(case.id, trial)) for case, trial in pairs],
    )
    return scores(report.model_dump(mode="json"))


def test_full_suites_score_alike_in_process_embedded_and_on_redis(
    farm: Farm, redis_url: str, namespace: str
) -> None:
    expected = direct()
    cases = expected["cases"]
    assert isinstance(cases, dict) and len(cases) == len(resolve("all").cases)
    assert {case["status"] for case in cases.values()} == {"done"}
    assert expected["composite"] is not None

    embedded = farm.run("run", "--label", "embedded", "--out", str(farm.tmp / "out" / "embedded"))
    assert embedded.returncode == 0, embedded.stdout + embedded.stderr
    assert scores(farm.report("embedded")) == expected

    shared = Farm(farm.tmp, {**farm.env, "MEMEVAL_BROKER_URL": redis_url,
                             "MEMEVAL_NAMESPACE": namespace})  # fmt: skip
    worker = shared.start("worker", "--concurrency", "2", log="worker.log")
    try:
        distributed = shared.run("run", "--label", "redis",
                                 "--out", str(shared.tmp / "out" / "redis"))  # fmt: skip
    finally:
        stop(worker)
    assert distributed.returncode == 0, (
        distributed.stdout + distributed.stderr + (shared.tmp / "worker.log").read_text()
    )
    assert scores(shared.report("redis")) == expected
    assert sorted(farm.rows("select label, status from runs")) == [
        ("embedded", "finished"),
        ("redis", "finished"),
    ]
