"""Hand-built run reports whose outcomes are fixed per unit, so two runs differ only as asked.

Each probe and check has a fixed difficulty in [0, 1); it passes when the run's rate is above
it. Two runs at the same rates therefore agree everywhere, a lower rate fails a predictable
set of units, and `flip` toggles chosen units, which is how a one-probe flip is staged.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

from memeval.results import (
    CaseResult,
    CaseStatus,
    CheckResult,
    CheckStatus,
    Phase,
    ProbeResult,
    QueryLog,
    RunReport,
    Timing,
)
from memeval.suites.fixture import Dimension
from memeval.summary import build_report

HOSTILE = '</script><script>alert("pwned")</script><img src=x onerror="alert(1)"> & <b>bold</b>'
SCENARIOS = 12
PROBES = 5
FIXTURES = 8
CHECKS = 4


def difficulty(key: str) -> float:
    return random.Random(key).random()


def _probe(case_id: str, i: int, phase: Phase, rate: float, flip: set[str]) -> ProbeResult:
    key = f"{case_id}:{phase.value}:p{i}"
    hit = (difficulty(key) < rate) != (key in flip)
    pack = "\n".join(
        [
            "# Context",
            "## Facts",
            f"- the answer for p{i} is {'value-' + str(i) if hit else 'something else'}",
            f"- noise line with {HOSTILE}" if i == 0 else "- an unrelated line",
        ]
    )
    return ProbeResult(
        probe=f"p{i}",
        phase=phase,
        via="ask",
        style="paraphrase" if i % 2 else "lexical",
        scored=True,
        question=f"What is the value for p{i}? {HOSTILE if i == 0 else ''}".strip(),
        expect=[f"value-{i}"],
        stale=["old-value"] if i == 1 else [],
        forbidden=["secret"] if i == 2 else [],
        pack=pack,
        pack_tokens=40,
        status=CheckStatus.passed if hit else CheckStatus.failed,
        hit=hit,
        rank=1 if hit else None,
        fresh_first=hit if i == 1 else None,
        extractive=f"the answer for p{i}",
        extractive_ok=hit,
    )


def _scenario(run_id: str, s: int, trial: int, rate: float, flip: set[str], jitter: random.Random):
    case_id = f"lifecycle/scenario_{s:02d}"
    probes = [_probe(case_id, i, phase, rate, flip) for phase in Phase for i in range(PROBES)]
    timings = [
        Timing(step=step, call=call, ms=round(base * (1 + jitter.random()), 3))
        for step, call, base, n in (
            ("write", "ingest", 0.4, 4),
            ("write", "pre_turn", 3.0, 6),
            ("settle", "list", 0.1, 2),
            ("probe", "pre_turn", 4.0, 10),
            ("synthesise", "build_beliefs", 12.0, 1),
            ("forget", "forget", 0.2, 1),
        )
        for _ in range(n)
    ]
    return CaseResult(
        run_id=run_id,
        case_id=case_id,
        trial=trial,
        kind="scenario",
        engine="e",
        tenant=f"{run_id}-{s}",
        status=CaseStatus.done,
        score=sum(p.hit for p in probes) / len(probes),
        probes=probes,
        timings=timings,
        tags=["learning"] if s == 0 else [],
        engine_usd_micros=150,
        answerer_usd_micros=0,
    )


def _fixture(
    run_id: str, dim: str, f: int, trial: int, rate: float, flip: set[str], jitter: random.Random
) -> CaseResult:
    case_id = f"dimensions/{dim}/fixture_{f:02d}"
    checks = []
    for c in range(CHECKS):
        key = f"{case_id}:c{c}"
        ok = (difficulty(key) < rate) != (key in flip)
        checks.append(
            CheckResult(
                query=c // 2,
                kind="contains",
                value=f"fact-{c}",
                status=CheckStatus.passed if ok else CheckStatus.failed,
                detail="" if ok else f"missing fact-{c} {HOSTILE}",
            )
        )
    queries = [
        QueryLog(query=q, text=f"question {q} about {dim}", answer=f"answer {q}", hits=[HOSTILE])
        for q in range(CHECKS // 2)
    ]
    return CaseResult(
        run_id=run_id,
        case_id=case_id,
        trial=trial,
        kind="fixture",
        dimension=dim,
        engine="e",
        tenant=f"{run_id}-{dim}-{f}",
        status=CaseStatus.done,
        score=sum(ch.ok for ch in checks) / len(checks),
        checks=checks,
        queries=queries,
        timings=[Timing(step="probe", call="query", ms=round(1 + jitter.random(), 3))],
    )


def make_report(
    *,
    label: str,
    engine: str = "reference",
    hit: float = 0.8,
    rates: dict[str, float] | None = None,
    flip: set[str] | None = None,
    trials: int = 1,
    seed: int = 0,
    run_id: str | None = None,
    scenarios: int = SCENARIOS,
    fixtures: int = FIXTURES,
) -> RunReport:
    """`rates` maps a dimension to its pass rate (default 0.8); `seed` only moves timings."""
    run_id = run_id or f"run-{label}-{seed}"
    flip = flip or set()
    jitter = random.Random(seed)
    cases = []
    for trial in range(trials):
        cases += [_scenario(run_id, s, trial, hit, flip, jitter) for s in range(scenarios)]
        for dim in Dimension:
            rate = (rates or {}).get(dim.value, 0.8)
            cases += [
                _fixture(run_id, dim.value, f, trial, rate, flip, jitter) for f in range(fixtures)
            ]
    for case in cases:
        case.engine = engine
    start = datetime(2025, 1, 2, 3, 4, tzinfo=UTC)
    return build_report(
        run_id=run_id,
        label=label,
        engine=engine,
        suite="all",
        started_at=start,
        finished_at=start,
        cases=cases,
        planned=[f"{c.case_id}#{c.trial}" for c in cases],
    )
