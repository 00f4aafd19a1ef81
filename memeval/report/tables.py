"""The rows a run report shows, computed once for both the markdown and the HTML report."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from memeval.report.numbers import unpriced
from memeval.results import CaseResult, CaseStatus, Phase, ProbeResult, QueryLog
from memeval.scoring.kpis import Tally, kpis_of, merge, percentile
from memeval.scoring.spend import engine_spend

ALL = "all"
PACK_HEAD_LINES = 12
STEPS = ("write", "settle", "probe", "answer", "synthesise", "forget", "reset")
"""The runner's steps in the order a case goes through them; any other step sorts last."""


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AccuracyRow(Row):
    name: str
    phase: str
    probes: int
    pack_hit: float | None
    extractive: float | None
    model: float | None
    captured: float | None
    mrr: float | None
    fresh_first: float | None
    leaks: int
    leak_checks: int
    f1: float | None = None  # mean token F1 of the extractive answer
    evidence: float | None = None  # evidence recall over probes that name evidence


class LatencyRow(Row):
    step: str
    call: str
    n: int
    min: float
    p25: float
    p50: float
    p75: float
    p95: float
    p99: float
    max: float


class CostRow(Row):
    group: str
    engine_usd: float
    answerer_usd: float
    correct: int
    usd_per_correct: float | None


class CallUsage(Row):
    call: str
    calls: int
    total_ms: float


class Usage(Row):
    engine_usd: float | None  # None: the engine reports no usage
    engine_calls: int | None
    engine_tokens: int | None
    answerer_usd: float
    model_answers: int
    model_tokens: int
    pack_tokens: int
    calls: list[CallUsage]


class Miss(Row):
    case_id: str
    trial: int
    where: str
    question: str
    expected: str
    status: str
    detail: str = ""
    head: list[str]


def _share(flags: Iterable[bool]) -> float | None:
    items = list(flags)
    return sum(items) / len(items) if items else None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def status_counts(cases: list[CaseResult]) -> str:
    """E.g. "60 done, 2 error"."""
    counts = Counter(c.status.value for c in cases)
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none"


def scenario_name(case_id: str) -> str:
    return case_id.removeprefix("lifecycle/")


def accuracy_row(name: str, phase: str, probes: list[ProbeResult]) -> AccuracyRow:
    scored = [p for p in probes if p.scored]
    leak = [p for p in probes if p.forbidden and not p.abstain]
    return AccuracyRow(
        name=name,
        phase=phase,
        probes=len(scored),
        pack_hit=_share(p.hit for p in scored),
        extractive=_share(p.extractive_ok for p in scored),
        model=_share(p.model_ok for p in scored if p.model_ok is not None),
        captured=_share(p.captured for p in scored if p.captured is not None),
        mrr=sum(p.rr for p in scored) / len(scored) if scored else None,
        fresh_first=_share(bool(p.fresh_first) for p in scored if p.fresh_first is not None),
        leaks=sum(bool(p.leaked) for p in leak),
        leak_checks=len(leak),
        f1=_mean([p.extractive_f1 for p in scored if p.extractive_f1 is not None]),
        evidence=_share(bool(p.evidence_recalled) for p in scored if p.evidence),
    )


def accuracy_rows(cases: list[CaseResult]) -> list[AccuracyRow]:
    """Scenario by phase, each phase closed by its `all` row, then `all` over both phases.

    Trials of a scenario pool into its row: the row answers "how does this scenario fare".
    """
    scenarios: dict[str, list[ProbeResult]] = defaultdict(list)
    for case in cases:
        if case.kind == "scenario":
            scenarios[case.case_id] += case.probes
    if not scenarios:
        return []
    rows = []
    for phase in Phase:
        for case_id, probes in sorted(scenarios.items()):
            rows.append(
                accuracy_row(
                    scenario_name(case_id), phase.value, [p for p in probes if p.phase is phase]
                )
            )
        every = [p for probes in scenarios.values() for p in probes if p.phase is phase]
        rows.append(accuracy_row(ALL, phase.value, every))
    rows.append(accuracy_row(ALL, ALL, [p for probes in scenarios.values() for p in probes]))
    return rows


SCENARIO_ROWS = 30


def worst_scenarios(
    rows: list[AccuracyRow], limit: int = SCENARIO_ROWS
) -> tuple[list[AccuracyRow], int]:
    """`rows` cut to the `all` rows and those of the `limit` scenarios missing the most probes
    (ties by name), in their order; and how many scenarios there were. An imported benchmark
    is one scenario a question, so its table by scenario would be one row a case: thousands of
    rows nobody reads, where the few that fail are what a reader came for."""
    missed: dict[str, float] = defaultdict(float)
    for r in rows:
        if r.name != ALL:
            missed[r.name] += r.probes * (1 - (r.pack_hit or 0.0))
    if len(missed) <= limit:
        return rows, len(missed)
    kept = set(sorted(missed, key=lambda name: (-missed[name], name))[:limit])
    return [r for r in rows if r.name == ALL or r.name in kept], len(missed)


def style_rows(cases: list[CaseResult]) -> list[AccuracyRow]:
    probes = [p for c in cases if c.kind == "scenario" for p in c.probes]
    styles = sorted({p.style for p in probes})
    return [accuracy_row(s, ALL, [p for p in probes if p.style == s]) for s in styles]


def tag_rows(cases: list[CaseResult]) -> list[AccuracyRow]:
    """One row per probe tag (`category:temporal`...), both phases pooled; a probe with
    several tags counts in each of them."""
    probes = [p for c in cases if c.kind == "scenario" for p in c.probes]
    tags = sorted({t for p in probes for t in p.tags})
    return [accuracy_row(t, ALL, [p for p in probes if t in p.tags]) for t in tags]


class CheckTagRow(Row):
    tag: str
    checks: int
    passed: float | None


def check_tag_rows(cases: list[CaseResult]) -> list[CheckTagRow]:
    """Fixture queries by tag: the share of their checks passed."""
    by_tag: dict[str, list[bool]] = defaultdict(list)
    for case in cases:
        if case.kind != "fixture":
            continue
        tags = {q.query: q.tags for q in case.queries}
        for check in case.checks:
            for tag in tags.get(check.query, []):
                by_tag[tag].append(check.ok)
    return [
        CheckTagRow(tag=t, checks=len(flags), passed=_share(flags))
        for t, flags in sorted(by_tag.items())
    ]


def latency_rows(cases: list[CaseResult]) -> list[LatencyRow]:
    """Per run step and engine call, since one step (write) mixes very different calls."""
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    for case in cases:
        for t in case.timings:
            samples[(t.step, t.call)].append(t.ms)
    rows = []

    def order(key: tuple[str, str]) -> tuple[int, str, str]:
        step, call = key
        return (STEPS.index(step) if step in STEPS else len(STEPS), step, call)

    for (step, call), ms in sorted(samples.items(), key=lambda item: order(item[0])):
        q = {p: percentile(ms, p) or 0.0 for p in (25, 50, 75, 95, 99)}
        rows.append(
            LatencyRow(
                step=step,
                call=call,
                n=len(ms),
                min=min(ms),
                p25=q[25],
                p50=q[50],
                p75=q[75],
                p95=q[95],
                p99=q[99],
                max=max(ms),
            )
        )
    return rows


def cost_rows(cases: list[CaseResult]) -> list[CostRow]:
    """Cost per correct answer by part of the suite, read from the cost KPIs of each part.
    Each case is tallied once: the whole suite's tally is the sum of its parts'."""
    parts: dict[str, list[Tally]] = defaultdict(list)
    for case in cases:
        parts[case.dimension or case.kind].append(Tally.of(case))
    merged = {group: merge(part) for group, part in sorted(parts.items())}
    rows = []
    for group, t in [*merged.items(), (ALL, merge(merged.values()))]:
        measured = kpis_of(t)
        cost = {k.name: k for k in measured if k.group == "cost"}
        # Unpriced, the cost per correct answer is not measured: a dash, never a free "$0".
        priced = "usd_per_correct" not in unpriced({k.name: k.value for k in measured})
        rows.append(
            CostRow(
                group=group,
                engine_usd=cost["engine_usd"].value or 0.0,
                answerer_usd=cost["answerer_usd"].value or 0.0,
                correct=cost["usd_per_correct"].n,
                usd_per_correct=cost["usd_per_correct"].value if priced else None,
            )
        )
    return rows


def usage(cases: list[CaseResult]) -> Usage:
    calls: dict[str, list[float]] = defaultdict(list)
    for case in cases:
        for t in case.timings:
            calls[t.call].append(t.ms)
    probes = [p for c in cases for p in c.probes]
    answered: list[ProbeResult | QueryLog] = [*probes, *(q for c in cases for q in c.queries)]
    spend = engine_spend(cases)
    return Usage(
        engine_usd=None if spend is None else spend.usd_micros / 1e6,
        engine_calls=None if spend is None else spend.calls,
        engine_tokens=None if spend is None else spend.tokens,
        answerer_usd=sum(c.answerer_usd_micros for c in cases) / 1e6,
        model_answers=sum(a.model_answer is not None for a in answered),
        model_tokens=sum(a.model_tokens for a in answered),
        pack_tokens=sum(p.pack_tokens for p in probes),
        calls=[
            CallUsage(call=name, calls=len(ms), total_ms=sum(ms))
            for name, ms in sorted(calls.items())
        ],
    )


def misses(cases: list[CaseResult]) -> list[Miss]:
    """Every failure with what it takes to judge it: the question, the expectation, the pack."""
    out = []
    for case in cases:
        if case.status is not CaseStatus.done:
            out.append(
                Miss(
                    case_id=case.case_id,
                    trial=case.trial,
                    where="case",
                    question="",
                    expected="",
                    status=case.status.value,
                    detail=case.error or "",
                    head=[],
                )
            )
        for p in case.probes:
            if (p.scored and not p.hit) or p.leaked:
                out.append(
                    Miss(
                        case_id=case.case_id,
                        trial=case.trial,
                        where=f"{p.probe} ({p.phase.value}, {p.via})",
                        question=p.question,
                        expected=f"leaked {p.leaked}" if p.leaked else f"expected {p.expect}",
                        status=p.status.value,
                        detail=p.error or "",
                        head=p.pack.splitlines()[:PACK_HEAD_LINES],
                    )
                )
        queries = {q.query: q for q in case.queries}
        for ch in case.checks:
            if ch.ok:
                continue
            asked = queries.get(ch.query)
            head = []
            if asked is not None:
                head = ([f"answer: {asked.answer}"] if asked.answer else []) + [
                    f"- {hit}" for hit in asked.hits
                ]
            out.append(
                Miss(
                    case_id=case.case_id,
                    trial=case.trial,
                    where=f"query {ch.query}",
                    question=asked.text if asked else "",
                    expected=f"{ch.kind}: {ch.value}",
                    status=ch.status.value,
                    detail=ch.detail,
                    head=head[:PACK_HEAD_LINES],
                )
            )
    return out
