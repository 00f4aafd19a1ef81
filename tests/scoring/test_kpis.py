"""KPIs and the composite from hand-made case results."""

from __future__ import annotations

import pytest

from memeval.engines.types import Usage
from memeval.results import (
    CaseResult,
    CaseStatus,
    CheckResult,
    CheckStatus,
    Phase,
    ProbeResult,
    QueryLog,
    Timing,
    UsageWindow,
)
from memeval.scoring.kpis import composite, dimension_scores, kpis, percentile


def fixture(dim: str, score: float, status=CaseStatus.done, **kw) -> CaseResult:
    return CaseResult(
        run_id="r",
        case_id=f"dimensions/{dim}/{score}",
        kind="fixture",
        dimension=dim,
        engine="e",
        tenant="t",
        status=status,
        score=score,
        **kw,
    )


def probe(phase: Phase, hit: bool, rank: int | None = None, **kw) -> ProbeResult:
    base = dict(
        probe="p",
        phase=phase,
        via="ask",
        style="lexical",
        scored=True,
        question="q?",
        expect=["x"],
        hit=hit,
        rank=rank,
    )
    return ProbeResult(**(base | kw))


def scenario(probes, tags=(), **kw) -> CaseResult:
    return CaseResult(
        run_id="r",
        case_id="lifecycle/s",
        kind="scenario",
        engine="e",
        tenant="t",
        status=CaseStatus.done,
        probes=probes,
        tags=list(tags),
        **kw,
    )


def by_name(records):
    return {k.name: k for k in records}


def test_composite_uses_the_weights():
    dims = {"temporal": 1.0, "conflict": 0.0, "multihop": 1.0, "abstention": 0.0, "provenance": 1.0}
    assert composite(dims) == pytest.approx(0.25 + 0.20 + 0.10)


def test_composite_renormalises_when_dimensions_are_absent():
    dims = {
        "temporal": 0.5,
        "conflict": None,
        "multihop": None,
        "abstention": None,
        "provenance": None,
    }
    assert composite(dims) == pytest.approx(0.5)
    assert composite({d: None for d in dims}) is None


def test_dimension_is_mean_of_done_fixtures():
    cases = [
        fixture("temporal", 1.0),
        fixture("temporal", 0.5),
        fixture("temporal", 0.0, status=CaseStatus.lost),
    ]
    dims = dimension_scores(cases)
    assert dims["temporal"] == pytest.approx(0.75)
    assert dims["conflict"] is None


def test_percentile_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile(values, 99) == 99.0
    assert percentile([], 50) is None
    assert percentile([7.0], 99) == 7.0


def test_accuracy_kpis():
    probes = [
        probe(Phase.recall, True, 1),
        probe(Phase.recall, False, None, style="paraphrase"),
        probe(Phase.synthesis, True, 2, style="paraphrase", captured=True),
        probe(Phase.synthesis, True, 1, captured=False),
        probe(Phase.recall, False, None, scored=False, expect=[], forbidden=["z"], leaked=["z"]),
    ]
    k = by_name(kpis([scenario(probes)]))
    assert k["pack_hit_recall"].value == 0.5 and k["pack_hit_recall"].n == 2
    assert k["pack_hit"].value == 0.75 and k["pack_hit"].n == 4
    assert k["mrr"].value == pytest.approx((1 + 0 + 0.5 + 1) / 4)
    assert k["paraphrase_pack_hit"].value == 0.5
    assert k["captured"].value == 0.5
    assert k["leaks"].value == 1.0 and k["leaks"].better == "lower"
    assert k["synthesis_gain"].value == pytest.approx(0.5)


def test_fresh_first_and_planted_conflicts():
    probes = [
        probe(Phase.recall, True, 1, stale=["old"], fresh_first=True, stale_first=False),
        probe(Phase.recall, True, 2, stale=["old"], fresh_first=False, stale_first=True),
        probe(Phase.recall, True, 1, accept=["disagree"], pack="- sources disagree: 5 vs 10"),
    ]
    k = by_name(kpis([scenario(probes, tags=["conflicts"])]))
    assert k["fresh_first"].value == 0.5 and k["fresh_first"].n == 2
    assert k["conflict_pack_hit"].value == 1.0 and k["conflict_pack_hit"].n == 1
    assert k["disagreement_in_pack"].value == 1.0
    untagged = by_name(kpis([scenario(probes)]))
    assert untagged["conflict_pack_hit"].value is None


def test_spurious_conflicts_only_in_quiet_fixtures():
    quiet = fixture(
        "temporal",
        1.0,
        queries=[
            QueryLog(query=0, text="q", conflicts=1),
            QueryLog(query=1, text="q2", conflicts=0),
        ],
    )
    planted = fixture(
        "conflict",
        1.0,
        queries=[QueryLog(query=0, text="q", conflicts=3)],
        checks=[CheckResult(query=0, kind="conflict", value="a, b", status=CheckStatus.passed)],
    )
    k = by_name(kpis([quiet, planted]))
    assert k["spurious"].value == 0.5 and k["spurious"].n == 2


def test_latency_kpis_use_write_pre_turns_and_probe_step():
    timings = [Timing(step="write", call="pre_turn", ms=float(ms)) for ms in range(1, 101)]
    timings += [Timing(step="write", call="pre_turn", ms=5000.0)]
    timings += [
        Timing(step="probe", call="pre_turn", ms=2.0),
        Timing(step="probe", call="start_session", ms=4.0),
    ]
    timings += [Timing(step="synthesise", call="build_beliefs", ms=30.0)]
    k = by_name(kpis([scenario([probe(Phase.recall, True, 1)], timings=timings)]))
    assert k["pre_turn_p50"].value == 51.0 and k["pre_turn_p50"].n == 101
    assert k["pre_turn_timeout_rate"].value == pytest.approx(1 / 101, abs=1e-4)
    assert k["probe_p50"].value == 2.0 and k["probe_p50"].n == 2
    assert k["build_ms"].value == 30.0


def test_cost_kpis():
    case = scenario(
        [probe(Phase.recall, True, 1), probe(Phase.recall, True, 1)],
        engine_usd_micros=1_000_000,
        engine_usage=UsageWindow(
            before=Usage(usd_micros=2_000_000), after=Usage(usd_micros=3_000_000)
        ),
        answerer_usd_micros=500_000,
    )
    k = by_name(kpis([case]))
    assert k["engine_usd"].value == 1.0
    assert k["answerer_usd"].value == 0.5
    assert k["usd_per_correct"].value == 0.75


def test_kpis_have_seven_groups_and_no_data_is_none():
    k = kpis([])
    assert {r.group for r in k} == {
        "accuracy",
        "learning",
        "surprise",
        "conflicts",
        "safety",
        "cost",
        "latency",
    }
    assert by_name(k)["pack_hit"].value is None


def test_model_answers_count_over_probes_and_fixture_queries():
    answered = [
        QueryLog(query=0, text="a?", model_answer="x", model_ok=True),
        QueryLog(query=1, text="b?", model_answer="y", model_ok=False),
        QueryLog(query=2, text="c?"),  # no model answer: not counted
    ]
    cases = [
        fixture("temporal", 1.0, queries=answered),
        scenario([probe(Phase.recall, True, 1, model_answer="x", model_ok=True)]),
    ]
    k = by_name(kpis(cases))["model_answer"]
    assert (k.value, k.n) == (pytest.approx(2 / 3), 3)
