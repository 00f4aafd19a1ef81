"""A score over fewer cases than planned says so: lost, errored and missing cases are named
beside the composite, and none of them moves a KPI."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.console import Console

from memeval.cli.summary import print_summary
from memeval.report.html import render_html
from memeval.report.markdown import render
from memeval.results import CaseResult, CaseStatus, CheckResult, CheckStatus, Phase, ProbeResult
from memeval.summary import build_report

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def fixture(n: int, status: CaseStatus = CaseStatus.done) -> CaseResult:
    done = status is CaseStatus.done
    return CaseResult(
        run_id="r",
        case_id=f"dimensions/abstention/f{n}",
        kind="fixture",
        dimension="abstention",
        engine="reference",
        tenant=f"r-f{n}-0-a0",
        status=status,
        score=1.0 if done else None,
        checks=[CheckResult(query=0, kind="abstain", value="", status=CheckStatus.passed)]
        if done
        else [],
    )


def scenario(status: CaseStatus, hit: bool) -> CaseResult:
    probe = ProbeResult(
        probe="p",
        phase=Phase.recall,
        via="ask",
        style="lexical",
        scored=True,
        question="q",
        expect=["x"],
        hit=hit,
    )
    return CaseResult(
        run_id="r",
        case_id=f"lifecycle/{status.value}",
        kind="scenario",
        engine="reference",
        tenant="t",
        status=status,
        probes=[probe],
        infra_retries=3,
        attempt=1 if status is CaseStatus.done else 0,
    )


def report(cases: list[CaseResult], planned: list[str]):
    return build_report(
        run_id="r",
        label="r",
        engine="reference",
        suite="all",
        started_at=NOW,
        finished_at=NOW,
        cases=cases,
        planned=planned,
    )


def test_two_lost_of_ten_abstention_fixtures_make_a_partial_composite():
    cases = [fixture(n) for n in range(8)] + [fixture(8, CaseStatus.lost)]
    run = report(cases, [f"dimensions/abstention/f{n}#0" for n in range(10)])
    assert run.composite == 1.0  # of the eight that ran...
    assert run.partial  # ...which is not the suite's
    assert run.unscored == [
        "dimensions/abstention/f8#0 (lost)",
        "dimensions/abstention/f9#0 (missing)",
    ]
    console = Console(record=True, width=200)
    print_summary(run, console)
    shown = console.export_text()
    assert "composite (abstention only, partial)" in shown
    assert (
        "partial: 2 of 10 planned cases are not in the score: dimensions/abstention/f8#0 (lost)"
        in shown
    )
    md = render(run)
    assert "**Composite (abstention only, partial) 100.0%**" in md and "f9#0 (missing)" in md
    assert "partial: 2 of 10 planned cases" in render_html(run)


def test_a_complete_run_is_not_partial():
    run = report(
        [fixture(n) for n in range(3)], [f"dimensions/abstention/f{n}#0" for n in range(3)]
    )
    assert not run.partial and run.unscored == []
    assert "partial" not in render(run).lower()


def test_errored_cases_move_no_kpi_and_retries_are_counted():
    ran = scenario(CaseStatus.done, hit=True)
    broke = scenario(CaseStatus.error, hit=False)
    run = report([ran, broke], [f"{ran.case_id}#0", f"{broke.case_id}#0"])
    pack_hit = next(k for k in run.kpis if k.name == "pack_hit")
    assert (pack_hit.value, pack_hit.n) == (1.0, 1)
    assert (run.infra_retries, run.case_restarts) == (6, 1)
    assert "nfrastructure errors met: 6 requests retried, 1 case restarted" in render(run)
