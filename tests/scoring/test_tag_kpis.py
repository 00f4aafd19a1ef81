"""Per-tag accuracy KPIs in a run's JSON report, worked out by hand on three probes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rich.console import Console

from memeval.cli.summary import print_summary
from memeval.results import CaseResult, CaseStatus, Phase, ProbeResult, RunReport
from memeval.summary import build_report

A, B, LOST = "category:a", "category:b", "category:lost"


def probe(name: str, tags: list[str], **kw) -> ProbeResult:
    base = dict(
        probe=name,
        phase=Phase.recall,
        via="ask",
        style="lexical",
        scored=True,
        question="q?",
        expect=["x"],
        tags=tags,
    )
    return ProbeResult(**(base | kw))


def case(case_id: str, probes: list[ProbeResult], status=CaseStatus.done) -> CaseResult:
    return CaseResult(
        run_id="r",
        case_id=case_id,
        kind="scenario",
        engine="e",
        tenant="t",
        status=status,
        probes=probes,
    )


def report() -> RunReport:
    done = case(
        "lifecycle/one",
        [
            probe(
                "p1",
                [A],
                hit=True,
                rank=1,
                hit_rank=1,
                extractive_ok=True,
                extractive_f1=1.0,
                evidence=["w1"],
                evidence_found=["w1"],
                evidence_rank=2,
            ),
            probe(
                "p2",
                [A, B],
                extractive_f1=0.5,
                evidence=["w2", "w3"],
                evidence_found=["w2"],
                evidence_rank=1,
            ),
            probe("p3", [B], hit=True, rank=2, abstain=True),
            probe("unscored", [A], scored=False, hit=True, rank=1),
        ],
    )
    # An errored case says nothing about memory: its tag gets no records.
    broken = case("lifecycle/two", [probe("q", [LOST], hit=True)], status=CaseStatus.error)
    return build_report(
        run_id="r",
        label="l",
        engine="e",
        suite="s",
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        finished_at=None,
        cases=[done, broken],
        planned=[],
    )


def tagged(run: RunReport, tag: str | None) -> dict[str, tuple[float | None, int]]:
    return {k.name: (k.value, k.n) for k in run.kpis if k.tag == tag}


def test_each_tag_has_its_accuracy_kpis():
    run = RunReport.model_validate_json(report().model_dump_json())  # as the JSON report holds it
    assert tagged(run, A) == {
        "hit_at_1": (0.5, 2),
        "hit_at_3": (0.5, 2),
        "pack_hit": (0.5, 2),
        "mrr": (0.5, 2),
        "extractive_answer": (0.5, 2),
        "evidence_recall": (0.5, 2),
        "evidence_mrr": (0.75, 2),
        "extractive_f1": (0.75, 2),
    }
    assert tagged(run, B) == {
        "hit_at_1": (0.0, 1),  # the abstain probe expects no string to rank
        "hit_at_3": (0.0, 1),
        "pack_hit": (0.5, 2),
        "mrr": (0.25, 2),
        "extractive_answer": (0.0, 2),
        "evidence_recall": (0.0, 1),
        "evidence_mrr": (1.0, 1),
        "extractive_f1": (0.5, 1),
        "abstain_probes": (1.0, 1),
    }
    assert tagged(run, LOST) == {}
    assert all(k.group == "accuracy" for k in run.kpis if k.tag is not None)


def test_overall_kpis_are_untouched_by_the_tags():
    run = report()
    overall = tagged(run, None)
    assert overall["evidence_recall"] == (0.5, 2)
    assert overall["evidence_mrr"] == (0.75, 2)
    assert overall["pack_hit"] == (pytest.approx(2 / 3, abs=1e-4), 3)
    assert [k.name for k in run.overall_kpis] == [k.name for k in run.kpis if k.tag is None]
    assert len({k.name for k in run.overall_kpis}) == len(run.overall_kpis)


def test_terminal_summary_lists_each_kpi_once():
    console = Console(record=True, width=200)
    print_summary(report(), console)
    text = console.export_text()
    assert text.count(" evidence_mrr ") == 1
    assert A not in text
