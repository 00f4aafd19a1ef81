"""hit@1, hit@3 and tokens per correct answer: they separate a pack that answers first from one
that holds the whole tenant, where pack hit cannot; and the triple each summary leads with."""

from __future__ import annotations

from memeval.report.triple import line, triple
from memeval.results import CaseResult, CaseStatus, ProbeResult
from memeval.scoring.kpis import kpis
from memeval.suites.scenario import Probe
from tests.format.helpers import scored_probe

PROBE = Probe(id="p", question="Which port does billing use?", style="lexical", expect=["8443"])
FILLER = [f"- note {n} about the weather and lunch plans" for n in range(20)]


def scored(lines: list[str]) -> ProbeResult:
    markdown = "# Pack\n\n" + "\n".join(lines) + "\n"
    result = scored_probe(PROBE, markdown)
    result.pack_tokens = len(markdown) // 4
    return result


def case(result: ProbeResult) -> CaseResult:
    return CaseResult(
        run_id="r",
        case_id="lifecycle/x",
        kind="scenario",
        engine="e",
        tenant="t",
        status=CaseStatus.done,
        probes=[result],
    )


def test_pack_hit_ties_where_hit_at_k_and_tokens_per_correct_do_not():
    first = scored(["- billing listens on port 8443", *FILLER[:2]])
    whole = scored([*FILLER, "- billing listens on port 8443"])
    assert first.hit and whole.hit  # pack hit cannot tell them apart
    assert (first.hit_rank, whole.hit_rank) == (1, 21)
    a = {k.name: k.value for k in kpis([case(first)])}
    b = {k.name: k.value for k in kpis([case(whole)])}
    assert a["pack_hit"] == b["pack_hit"] == 1.0
    assert (a["hit_at_1"], a["hit_at_3"]) == (1.0, 1.0)
    assert (b["hit_at_1"], b["hit_at_3"]) == (0.0, 0.0)
    assert a["tokens_per_correct"] is not None and b["tokens_per_correct"] is not None
    assert b["tokens_per_correct"] > 5 * a["tokens_per_correct"]


def test_a_pack_missing_an_expected_string_has_no_hit_rank():
    probe = PROBE.model_copy(update={"expect": ["8443", "Priya"]})
    result = scored_probe(probe, "# P\n\n- port 8443\n")
    assert result.hit_rank is None and not result.hit


def test_the_triple_leads_with_a_proxy_when_no_model_answered():
    first = scored(["- billing listens on port 8443"])
    shown = triple("naive", kpis([case(first)]))
    assert shown.accuracy_kpi == "extractive_answer"
    text = line(shown)
    assert text.startswith("naive: accuracy 100.0% [extractive_answer (proxy: no model)]")
    assert "context tokens/probe" in text and "hit@1 100.0%" in text
    judged = first.model_copy(update={"model_answer": "8443", "model_ok": True, "judge_ok": False})
    assert triple("m", kpis([case(judged)])).accuracy_kpi == "judge_answer"
    assert triple("m", kpis([case(judged)])).accuracy == 0.0


def test_compare_leads_with_one_triple_line_per_engine():
    from datetime import UTC, datetime

    from memeval.report.compare import compare
    from memeval.report.compare_markdown import render_compare
    from memeval.results import RunReport

    def report(label: str, probe: ProbeResult) -> RunReport:
        return RunReport(
            run_id=label,
            label=label,
            engine=label,
            suite="inline",
            started_at=datetime.now(UTC),
            cases=[case(probe)],
        )

    first = scored(["- billing listens on port 8443", *FILLER[:2]])
    whole = scored([*FILLER, "- billing listens on port 8443"])
    result = compare([report("ranked", first), report("dumped", whole)], resamples=50)
    text = render_compare(result)
    head = text.split("## Verdicts")[0]
    assert "**ranked: accuracy" in head and "**dumped: accuracy" in head
    assert "hit@1 100.0%" in head and "hit@1 0.0%" in head
