"""A run's KPIs and composite: one number per question an engine configuration is chosen on.

Every KPI is computed from stored `CaseResult`s alone, so a report can be rebuilt at any time
and a partial run still yields honest numbers with their `n`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from memeval.results import CaseResult, CaseStatus, Kpi, Phase, ProbeResult
from memeval.scoring.spend import engine_spend
from memeval.suites.fixture import WEIGHTS, Dimension

PRE_TURN_TIMEOUT_MS = 1000.0
"""A pre_turn slower than this would stall an agent's reply: it counts toward the timeout rate."""


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile; None for no data rather than a misleading zero."""
    if not values:
        return None
    ordered = sorted(values)
    index = max(0, math.ceil(q / 100.0 * len(ordered)) - 1)
    return ordered[index]


def _share(items: Iterable[bool]) -> tuple[float | None, int]:
    flags = list(items)
    return (sum(flags) / len(flags) if flags else None), len(flags)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def dimension_scores(cases: list[CaseResult]) -> dict[str, float | None]:
    """Each dimension is the mean of its fixtures' scores; None where no fixture ran."""
    out: dict[str, float | None] = {}
    for dim in Dimension:
        scores = [
            c.score or 0.0
            for c in cases
            if c.dimension == dim.value and c.status is CaseStatus.done
        ]
        out[dim.value] = _mean(scores)
    return out


def composite(dimensions: dict[str, float | None]) -> float | None:
    """The weighted sum; with some dimensions absent, the present weights are renormalised."""
    present = {Dimension(d): s for d, s in dimensions.items() if s is not None}
    if not present:
        return None
    total = sum(WEIGHTS[d] for d in present)
    return sum(WEIGHTS[d] * s for d, s in present.items()) / total


def _probes(cases: list[CaseResult], tag: str | None = None) -> list[ProbeResult]:
    return [
        p
        for c in cases
        if c.kind == "scenario" and (tag is None or tag in c.tags)
        for p in c.probes
        if p.scored
    ]


Add = Callable[[str, str, tuple[float | None, int], str, str], None]


def _collector(records: list[Kpi], tag: str | None = None, *, defined_only: bool = False) -> Add:
    def add(group: str, name: str, value: tuple[float | None, int], unit: str, better: str) -> None:
        number, n = value
        if defined_only and number is None:
            return
        records.append(
            Kpi(
                group=group,
                name=name,
                value=None if number is None else round(number, 4),
                unit=unit,
                better=better,
                n=n,
                tag=tag,
            )
        )

    return add


def tag_kpis(cases: list[CaseResult]) -> list[Kpi]:
    """The accuracy KPIs over each probe tag's probes (`category:temporal`...), so a benchmark
    imported with categories reports each category's recall in the JSON itself.

    Only the KPIs a tag's probes define are listed: a tag without evidence writes has no
    evidence recall, and a row of empty numbers per tag would bury the ones that exist. They
    stay out of the scorecard, which compares and gates on the overall numbers."""
    probes = _probes([c for c in cases if c.status is CaseStatus.done])
    records: list[Kpi] = []
    for tag in sorted({t for p in probes for t in p.tags}):
        add = _collector(records, tag, defined_only=True)
        tagged = [p for p in probes if tag in p.tags]
        add("accuracy", "pack_hit", _share(p.hit for p in tagged), "share", "higher")
        add("accuracy", "mrr", (_mean([p.rr for p in tagged]), len(tagged)), "score", "higher")
        ok = _share(p.extractive_ok for p in tagged)
        add("accuracy", "extractive_answer", ok, "share", "higher")
        _answers(tagged, add)
    return records


def kpis(cases: list[CaseResult]) -> list[Kpi]:
    """Scores come from the cases that ran to the end, as the composite's do: an errored or
    lost case says nothing about memory, and its rerun will count instead. Spend is counted
    over every case, since it was paid whatever became of the case."""
    records: list[Kpi] = []
    spent, cases = cases, [c for c in cases if c.status is CaseStatus.done]
    add = _collector(records)

    probes = _probes(cases)
    recall = [p for p in probes if p.phase is Phase.recall]
    synthesis = [p for p in probes if p.phase is Phase.synthesis]
    # An abstain probe's `forbidden` strings are tempting wrong answers, not another tenant's
    # data: they are graded through its answers, not counted as leaks.
    leak_checks = [p for c in cases for p in c.probes if p.forbidden and not p.abstain]

    def hits(ps: list[ProbeResult]) -> tuple[float | None, int]:
        return _share(p.hit for p in ps)

    add("accuracy", "pack_hit_recall", hits(recall), "share", "higher")
    add("accuracy", "pack_hit", hits(probes), "share", "higher")
    add("accuracy", "mrr", (_mean([p.rr for p in probes]), len(probes)), "score", "higher")
    add("accuracy", "extractive_answer", _share(p.extractive_ok for p in probes), "share", "higher")
    # Fixtures are answered through their queries, scenarios through their probes: both count,
    # or a model sweep over fixtures would compare the models on cost alone.
    modelled = [p.model_ok for p in probes if p.model_ok is not None]
    modelled += [q.model_ok for c in cases for q in c.queries if q.model_ok is not None]
    add("accuracy", "model_answer", _share(modelled), "share", "higher")
    add(
        "accuracy",
        "captured",
        _share(p.captured for p in synthesis if p.captured is not None),
        "share",
        "higher",
    )
    add("accuracy", "leaks", _share(bool(p.leaked) for p in leak_checks), "share", "lower")
    para = [p for p in probes if p.style == "paraphrase"]
    add("accuracy", "paraphrase_pack_hit", hits(para), "share", "higher")
    lexical = [p for p in probes if p.style == "lexical"]
    add("accuracy", "lexical_pack_hit", hits(lexical), "share", "higher")
    _answers(probes, add)

    lessons = _probes(cases, "learning")
    add("learning", "lesson_in_pack", hits(lessons), "share", "higher")
    add("learning", "lesson_answered", _share(p.extractive_ok for p in lessons), "share", "higher")
    gain = (hits(synthesis)[0] or 0.0) - (hits(recall)[0] or 0.0) if synthesis and recall else None
    add("learning", "synthesis_gain", (gain, len(synthesis)), "share", "higher")
    scenarios = [c for c in cases if c.kind == "scenario"]
    built = float(sum(c.beliefs_built for c in scenarios)) if scenarios else None
    add("learning", "beliefs_built", (built, len(scenarios)), "count", "higher")

    surprise = _probes(cases, "surprise")
    add("surprise", "surprise_in_pack", hits(surprise), "share", "higher")
    add(
        "surprise",
        "surprise_mrr",
        (_mean([p.rr for p in surprise]), len(surprise)),
        "score",
        "higher",
    )

    planted = [p for p in _probes(cases, "conflicts") if p.accept]
    add("conflicts", "planted_flagged", hits(planted), "share", "higher")
    add("conflicts", "spurious", _spurious(cases), "share", "lower")
    stale = [p for p in probes if p.fresh_first is not None]
    add("conflicts", "fresh_first", _share(bool(p.fresh_first) for p in stale), "share", "higher")
    add(
        "conflicts",
        "disagreement_in_pack",
        _share(any(a.casefold() in p.pack.casefold() for a in p.accept) for p in planted),
        "share",
        "higher",
    )

    spend = engine_spend(spent)
    engine_usd = None if spend is None else spend.usd_micros / 1e6
    answer_usd = sum(c.answerer_usd_micros for c in spent) / 1e6
    correct = sum(p.hit for p in probes) + sum(ch.ok for c in cases for ch in c.checks)
    add("cost", "engine_usd", (engine_usd, len(spent)), "usd", "lower")
    add("cost", "answerer_usd", (answer_usd, len(spent)), "usd", "lower")
    per = ((engine_usd or 0.0) + answer_usd) / correct if correct else None
    add("cost", "usd_per_correct", (per, correct), "usd", "lower")
    tokens = [float(p.pack_tokens) for p in probes]
    add("cost", "pack_tokens", (_mean(tokens), len(tokens)), "tokens", "lower")

    _latency(cases, add)
    return records


def _answers(probes: list[ProbeResult], add: Add) -> None:
    """What substring luck cannot reach: the evidence writes in the pack, token F1 of the
    answers, abstention where nothing was said, and the model judge's verdicts."""
    cited = [p for p in probes if p.evidence]
    recalled = _share(bool(p.evidence_recalled) for p in cited)
    add("accuracy", "evidence_recall", recalled, "share", "higher")
    mrr = (_mean([p.evidence_rr for p in cited]), len(cited))
    add("accuracy", "evidence_mrr", mrr, "score", "higher")
    f1 = [p.extractive_f1 for p in probes if p.extractive_f1 is not None]
    add("accuracy", "extractive_f1", (_mean(f1), len(f1)), "score", "higher")
    model_f1 = [p.model_f1 for p in probes if p.model_f1 is not None]
    add("accuracy", "model_f1", (_mean(model_f1), len(model_f1)), "score", "higher")
    silent = [p for p in probes if p.abstain]
    add("accuracy", "abstain_probes", _share(p.hit for p in silent), "share", "higher")
    judged = [p.judge_ok for p in probes if p.judge_ok is not None]
    add("accuracy", "judge_answer", _share(judged), "share", "higher")


def _spurious(cases: list[CaseResult]) -> tuple[float | None, int]:
    """Queries in fixtures that plant no conflict, yet come back reporting one that the query
    does not list as acceptable (a conflict a careful reader might raise is no fault)."""
    quiet = [
        q
        for c in cases
        if c.kind == "fixture" and not any(ch.kind == "conflict" for ch in c.checks)
        for q in c.queries
    ]
    return _share(q.conflicts > q.acceptable_conflicts for q in quiet)


def _latency(cases: list[CaseResult], add: Add) -> None:
    pre = [t.ms for c in cases for t in c.timings if t.call == "pre_turn" and t.step == "write"]
    for q in (50, 95, 99):
        add("latency", f"pre_turn_p{q}", (percentile(pre, q), len(pre)), "ms", "lower")
    slow = _share(ms > PRE_TURN_TIMEOUT_MS for ms in pre)
    add("latency", "pre_turn_timeout_rate", slow, "share", "lower")
    probe = [t.ms for c in cases for t in c.timings if t.step == "probe"]
    for q in (50, 95):
        add("latency", f"probe_p{q}", (percentile(probe, q), len(probe)), "ms", "lower")
    build = [t.ms for c in cases for t in c.timings if t.call == "build_beliefs"]
    add("latency", "build_ms", (_mean(build), len(build)), "ms", "lower")
