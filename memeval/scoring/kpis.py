"""A run's KPIs and composite: one number per question an engine configuration is chosen on.

Every KPI is computed from stored `CaseResult`s alone, so a report can be rebuilt at any time
and a partial run still yields honest numbers with their `n`.

Each case is first reduced to a `Tally` of sums and counts, and the KPIs are read from the
tallies added up. A bootstrap then resamples tallies instead of walking every probe of every
case thousands of times, and both paths share one definition of each KPI.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import NamedTuple

from memeval.engines.types import Capability, Usage
from memeval.results import (
    Better,
    CaseResult,
    CaseStatus,
    CheckStatus,
    EraseCheck,
    Kpi,
    KpiGroup,
    Phase,
    ProbeResult,
    UsageWindow,
)
from memeval.scoring.spend import usage_union
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


def dimension_scores(cases: list[CaseResult]) -> dict[str, float | None]:
    """Each dimension is the mean of its fixtures' scores; None where no fixture ran."""
    return tally(cases).dimensions()


def composite(dimensions: dict[str, float | None]) -> float | None:
    """The weighted sum; with some dimensions absent, the present weights are renormalised."""
    present = {Dimension(d): s for d, s in dimensions.items() if s is not None}
    if not present:
        return None
    total = sum(WEIGHTS[d] for d in present)
    return sum(WEIGHTS[d] * s for d, s in present.items()) / total


# ---- what one case adds up to ----------------------------------------------------------------

APART = "reported:apart"
"""A probe tag (LoCoMo's adversarial category by default): the probe counts under its other
tags' KPIs, never in the run's overall numbers, as published tables leave it out."""


class Seen(NamedTuple):
    """A case with the probes its KPIs read picked out once: thirty KPIs read them, and
    picking them again for each was most of what a tally cost."""

    case: CaseResult
    scored: list[ProbeResult]
    ranked: list[ProbeResult]

    @classmethod
    def of(cls, case: CaseResult, scored: list[ProbeResult] | None = None) -> Seen:
        """`scored`: the probes that count, when not the case's own (a tag's, `tag_kpis`)."""
        picked = _scored(case) if scored is None else scored
        return cls(case, picked, _ranked(picked))


Items = Callable[[Seen], Iterator[float]]
"""The numbers one case contributes to a mean or share KPI: a flag (0/1) or a score each."""


def _scored(c: CaseResult) -> list[ProbeResult]:
    if c.kind != "scenario":
        return []
    return [p for p in c.probes if p.scored and APART not in p.tags]


def _tagged(tag: str, v: Seen) -> list[ProbeResult]:
    return v.scored if tag in v.case.tags else []


def _planted(v: Seen) -> list[ProbeResult]:
    return [p for p in _tagged("conflicts", v) if p.accept]


def _quiet(c: CaseResult) -> list[bool]:
    """Queries in fixtures that plant no conflict, yet come back reporting one that the query
    does not list as acceptable (a conflict a careful reader might raise is no fault)."""
    if c.kind != "fixture" or any(ch.kind == "conflict" for ch in c.checks):
        return []
    return [q.conflicts > q.acceptable_conflicts for q in c.queries]


def _ranked(scored: list[ProbeResult]) -> list[ProbeResult]:
    """Probes hit@k speaks of: those expecting strings, stored with the rank of the last one
    (a result stored before `hit_rank` existed says nothing, and is left out)."""
    return [p for p in scored if p.expect and not p.abstain and not (p.hit and p.hit_rank is None)]


def _hit_within(p: ProbeResult, k: int) -> bool:
    return p.hit_rank is not None and p.hit_rank <= k


def _answered_right(p: ProbeResult) -> bool:
    """The model's answer where a model answered, else the extractive one: the right answers
    a pack's tokens bought."""
    return bool(p.model_ok) if p.model_answer is not None else p.extractive_ok


def _in_pack(p: ProbeResult) -> bool:
    return any(a.casefold() in p.pack.casefold() for a in p.accept)


def _pre_turns(c: CaseResult) -> list[float]:
    return [t.ms for t in c.timings if t.call == "pre_turn" and t.step == "write"]


NEEDS = {"spurious": Capability.conflicts, "beliefs_built": Capability.beliefs}
"""KPIs only an engine with the capability can score: an engine that never reports a conflict
has no spurious ones to count, and one that distils no beliefs builds none. Without it they are
n/a (None), never a 0% that reads as measured or a number a comparison could call a move."""


def able(c: CaseResult, kpi: str) -> bool:
    """Whether `c`'s engine can score `kpi`; results stored before engines' capabilities were
    recorded with them (None) count as able, as they always did."""
    need = NEEDS.get(kpi)
    return need is None or c.capabilities is None or need.value in c.capabilities


def _searched(c: CaseResult, *modes: str) -> list[EraseCheck]:
    """Searches of the engine's faces that looked (passed, or found what must not be there):
    a face the engine lacks or that failed says nothing."""
    looked = (CheckStatus.passed, CheckStatus.failed)
    return [e for e in c.erase if e.mode in modes and e.status in looked]


MEANS: dict[str, Items] = {
    "pack_hit_recall": lambda v: (p.hit for p in v.scored if p.phase is Phase.recall),
    "pack_hit_synthesis": lambda v: (p.hit for p in v.scored if p.phase is Phase.synthesis),
    "pack_hit": lambda v: (p.hit for p in v.scored),
    "mrr": lambda v: (p.rr for p in v.scored),
    "hit_at_1": lambda v: (_hit_within(p, 1) for p in v.ranked),
    "hit_at_3": lambda v: (_hit_within(p, 3) for p in v.ranked),
    "extractive_answer": lambda v: (p.extractive_ok for p in v.scored),
    # Fixtures are answered through their queries, scenarios through their probes: both
    # count, or a model sweep over fixtures would compare the models on cost alone.
    "model_answer": lambda v: chain(
        (p.model_ok for p in v.scored if p.model_ok is not None),
        (q.model_ok for q in v.case.queries if q.model_ok is not None),
    ),
    "captured": lambda v: (
        p.captured for p in v.scored if p.phase is Phase.synthesis and p.captured is not None
    ),
    # An abstain probe's `forbidden` strings are tempting wrong answers, not another tenant's
    # data: they are graded through its answers, not counted as leaks.
    "leaks": lambda v: (bool(p.leaked) for p in v.case.probes if p.forbidden and not p.abstain),
    "paraphrase_pack_hit": lambda v: (p.hit for p in v.scored if p.style == "paraphrase"),
    "lexical_pack_hit": lambda v: (p.hit for p in v.scored if p.style == "lexical"),
    # What substring luck cannot reach: the evidence writes in the pack, token F1 of the
    # answers, abstention where nothing was said, and the model judge's verdicts.
    "evidence_recall": lambda v: (bool(p.evidence_recalled) for p in v.scored if p.evidence),
    "evidence_mrr": lambda v: (p.evidence_rr for p in v.scored if p.evidence),
    "extractive_f1": lambda v: (p.extractive_f1 for p in v.scored if p.extractive_f1 is not None),
    "model_f1": lambda v: (p.model_f1 for p in v.scored if p.model_f1 is not None),
    "abstain_probes": lambda v: (p.hit for p in v.scored if p.abstain),
    "judge_answer": lambda v: (p.judge_ok for p in v.scored if p.judge_ok is not None),
    "lesson_in_pack": lambda v: (p.hit for p in _tagged("learning", v)),
    "lesson_answered": lambda v: (p.extractive_ok for p in _tagged("learning", v)),
    "surprise_in_pack": lambda v: (p.hit for p in _tagged("surprise", v)),
    "surprise_mrr": lambda v: (p.rr for p in _tagged("surprise", v)),
    "conflict_pack_hit": lambda v: (p.hit for p in _planted(v)),
    "spurious": lambda v: iter(_quiet(v.case)),
    "fresh_first": lambda v: (bool(p.fresh_first) for p in v.scored if p.fresh_first is not None),
    "disagreement_in_pack": lambda v: (_in_pack(p) for p in _planted(v)),
    "pack_tokens": lambda v: (float(p.pack_tokens) for p in v.scored),
    "pre_turn_timeout_rate": lambda v: (ms > PRE_TURN_TIMEOUT_MS for ms in _pre_turns(v.case)),
    "build_ms": lambda v: (t.ms for t in v.case.timings if t.call == "build_beliefs"),
    "erase_failures": lambda v: (
        e.status is CheckStatus.failed for e in _searched(v.case, "by_id", "tenant")
    ),
    "cross_tenant_leaks": lambda v: (
        e.status is CheckStatus.failed for e in _searched(v.case, "cross_tenant")
    ),
    "injected_copies": lambda v: (
        e.status is CheckStatus.failed for e in _searched(v.case, "loop_guard")
    ),
    "host_pack_hit": lambda v: (p.host_hit for p in v.scored if p.host_hit is not None),
    "deadline_timeout_rate": lambda v: (p.late for p in v.case.probes if p.late is not None),
    "probe_turns_kept": lambda v: (
        not p.trace_removed for p in v.case.probes if p.trace_removed is not None
    ),
    "unranked_rate": lambda v: (lag.ms is None for lag in v.case.lags),
    "forget_write_supported": lambda v: iter(
        [not any(e.face == "forget_write" for e in v.case.erase)]
        if any(e.mode == "by_id" for e in v.case.erase)
        else []
    ),
}

COUNTS: dict[str, Callable[[Seen], float]] = {
    "belief_scenarios": lambda v: float(
        v.case.kind == "scenario" and able(v.case, "beliefs_built")
    ),
    "beliefs_built": lambda v: float(v.case.beliefs_built if v.case.kind == "scenario" else 0),
    "correct": lambda v: float(sum(p.hit for p in v.scored) + sum(ch.ok for ch in v.case.checks)),
    "answers_right": lambda v: float(sum(_answered_right(p) for p in v.scored)),
    "probe_tokens": lambda v: float(sum(p.pack_tokens for p in v.scored)),
}
"""Sums over the cases that ran to the end."""

_DIMENSIONS = [d.value for d in Dimension]
_MEAN_AT = {name: 2 * i for i, name in enumerate(MEANS)}
_COUNT_AT = {name: 2 * len(MEANS) + i for i, name in enumerate(COUNTS)}
_DIM_AT = {d: 2 * (len(MEANS) + i) + len(COUNTS) for i, d in enumerate(_DIMENSIONS)}
_SPENT_AT = 2 * (len(MEANS) + len(_DIMENSIONS)) + len(COUNTS)
_WIDTH = _SPENT_AT + 2  # spent cases, then the answerer's micro-dollars


@dataclass(frozen=True)
class Tally:
    """What some cases add up to: a sum and a count per mean KPI, the sums, each dimension's
    fixture scores, and the raw samples behind the percentiles and the engine's spend.

    Tallies add: the tally of two sets of cases is the sum of their tallies, which is what
    makes a resample cost as much as its number of cases rather than its number of probes.
    """

    numbers: tuple[float, ...]
    pre_turns: tuple[float, ...] = ()
    probe_ms: tuple[float, ...] = ()
    windows: tuple[UsageWindow, ...] = ()
    lags: tuple[float, ...] = ()  # write-to-ranked ms of the writes a pack did rank

    @classmethod
    def of(cls, case: CaseResult) -> Tally:
        numbers = [0.0] * _WIDTH
        numbers[_SPENT_AT] = 1.0
        numbers[_SPENT_AT + 1] = float(case.answerer_usd_micros)
        windows = () if case.engine_usage is None else (case.engine_usage,)
        if case.status is not CaseStatus.done:
            return cls(tuple(numbers), windows=windows)
        seen = Seen.of(case)
        _add_means(numbers, seen, MEANS)
        for name, count in COUNTS.items():
            numbers[_COUNT_AT[name]] = count(seen)
        if case.dimension in _DIM_AT:
            numbers[_DIM_AT[case.dimension]] = case.score or 0.0
            numbers[_DIM_AT[case.dimension] + 1] = 1.0
        return cls(
            tuple(numbers),
            pre_turns=tuple(sorted(_pre_turns(case))),
            probe_ms=tuple(sorted(t.ms for t in case.timings if t.step == "probe")),
            windows=windows,
            lags=tuple(sorted(lag.ms for lag in case.lags if lag.ms is not None)),
        )

    def mean(self, name: str) -> tuple[float | None, int]:
        at = _MEAN_AT[name]
        n = int(self.numbers[at + 1])
        return (self.numbers[at] / n if n else None), n

    def count(self, name: str) -> float:
        return self.numbers[_COUNT_AT[name]]

    def dimensions(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for d, at in _DIM_AT.items():
            n = self.numbers[at + 1]
            out[d] = self.numbers[at] / n if n else None
        return out

    def fixtures(self) -> dict[str, int]:
        return {d: int(self.numbers[at + 1]) for d, at in _DIM_AT.items()}

    @property
    def spent(self) -> int:
        return int(self.numbers[_SPENT_AT])

    @property
    def answerer_usd(self) -> float:
        return self.numbers[_SPENT_AT + 1] / 1e6

    def engine_spend(self) -> Usage | None:
        return usage_union(list(self.windows))

    def quantile(self, name: str) -> tuple[float | None, int]:
        """The percentile KPI `name` (one of `QUANTILES`) over this tally's samples, and n."""
        samples, q = QUANTILES[name]
        drawn = list(samples(self))
        return percentile(drawn, q), len(drawn)


Samples = Callable[[Tally], tuple[float, ...]]

QUANTILES: dict[str, tuple[Samples, float]] = {
    **{f"pre_turn_p{q}": ((lambda t: t.pre_turns), q) for q in (50, 95, 99)},
    **{f"probe_p{q}": ((lambda t: t.probe_ms), q) for q in (50, 95)},
    **{f"write_to_ranked_p{q}": ((lambda t: t.lags), q) for q in (50, 95)},
}
"""The KPIs that are percentiles of a tally's samples rather than ratios of its sums: the
samples each reads and its percentile. A bootstrap works these out apart (`resampling`)."""


def _add_means(numbers: list[float], seen: Seen, names: Iterable[str]) -> None:
    for name in names:
        if name in NEEDS and not able(seen.case, name):
            continue
        at = _MEAN_AT[name]
        items = list(MEANS[name](seen))
        numbers[at] = sum(items, numbers[at])  # added one by one, in order, as ever
        numbers[at + 1] += len(items)


def merge(tallies: Iterable[Tally]) -> Tally:
    parts = list(tallies)
    if not parts:
        return Tally(tuple([0.0] * _WIDTH))
    if len(parts) == 1:
        return parts[0]
    return Tally(
        tuple(map(sum, zip(*(t.numbers for t in parts), strict=True))),
        pre_turns=tuple(chain.from_iterable(t.pre_turns for t in parts)),
        probe_ms=tuple(chain.from_iterable(t.probe_ms for t in parts)),
        windows=tuple(chain.from_iterable(t.windows for t in parts)),
        lags=tuple(chain.from_iterable(t.lags for t in parts)),
    )


def tally(cases: Iterable[CaseResult]) -> Tally:
    return merge(Tally.of(c) for c in cases)


# ---- the KPIs, read from a tally -------------------------------------------------------------

Record = tuple[str, str, float | None, int, str, str]  # group, name, value, n, unit, better


def records(t: Tally) -> list[Record]:
    """Scores come from the cases that ran to the end, as the composite's do: an errored or
    lost case says nothing about memory, and its rerun will count instead. Spend is counted
    over every case, since it was paid whatever became of the case."""
    out: list[Record] = []

    def add(group: str, name: str, value: tuple[float | None, int], unit: str, better: str) -> None:
        number, n = value
        # Rounded only past any digit a report shows (float noise between sums taken in another
        # order): at 4 places, 0.78249 was stored as 0.7825 and printed 0.783 beside 0.782.
        rounded = None if number is None else round(number, 10)
        out.append((group, name, rounded, n, unit, better))

    def mean(group: str, name: str, unit: str = "share", better: str = "higher") -> None:
        add(group, name, t.mean(name), unit, better)

    for name in ("hit_at_1", "hit_at_3"):  # first: they separate engines that pack hit does not
        mean("accuracy", name)
    for name in ("pack_hit_recall", "pack_hit"):
        mean("accuracy", name)
    mean("accuracy", "host_pack_hit")  # with --deadline/--pack-tokens/--pack-sections
    mean("accuracy", "mrr", "score")
    for name in ("extractive_answer", "model_answer", "captured"):
        mean("accuracy", name)
    mean("accuracy", "leaks", better="lower")
    for name in ("paraphrase_pack_hit", "lexical_pack_hit", "evidence_recall"):
        mean("accuracy", name)
    for name in ("evidence_mrr", "extractive_f1", "model_f1"):
        mean("accuracy", name, "score")
    for name in ("abstain_probes", "judge_answer"):
        mean("accuracy", name)

    mean("learning", "lesson_in_pack")
    mean("learning", "lesson_answered")
    (recall, _), (synthesis, written) = t.mean("pack_hit_recall"), t.mean("pack_hit_synthesis")
    gain = synthesis - recall if synthesis is not None and recall is not None else None
    add("learning", "synthesis_gain", (gain, written), "share", "higher")
    scenarios = int(t.count("belief_scenarios"))
    built = t.count("beliefs_built") if scenarios else None
    add("learning", "beliefs_built", (built, scenarios), "count", "higher")

    mean("surprise", "surprise_in_pack")
    mean("surprise", "surprise_mrr", "score")

    mean("conflicts", "conflict_pack_hit")
    mean("conflicts", "spurious", better="lower")
    mean("conflicts", "fresh_first")
    mean("conflicts", "disagreement_in_pack")

    mean("safety", "erase_failures", better="lower")
    mean("safety", "cross_tenant_leaks", better="lower")
    mean("safety", "forget_write_supported")
    mean("safety", "probe_turns_kept", better="lower")
    mean("safety", "injected_copies", better="lower")

    spend = t.engine_spend()
    engine_usd = None if spend is None else spend.usd_micros / 1e6
    correct = int(t.count("correct"))
    right = int(t.count("answers_right"))
    per_right = t.count("probe_tokens") / right if right else None
    add("cost", "tokens_per_correct", (per_right, right), "tokens", "lower")
    add("cost", "engine_usd", (engine_usd, t.spent), "usd", "lower")
    add("cost", "answerer_usd", (t.answerer_usd, t.spent), "usd", "lower")
    per = ((engine_usd or 0.0) + t.answerer_usd) / correct if correct else None
    add("cost", "usd_per_correct", (per, correct), "usd", "lower")
    mean("cost", "pack_tokens", "tokens", "lower")

    def quantile(*names: str) -> None:
        for name in names:
            add("latency", name, t.quantile(name), "ms", "lower")

    quantile("pre_turn_p50", "pre_turn_p95", "pre_turn_p99")
    mean("latency", "pre_turn_timeout_rate", better="lower")
    mean("latency", "deadline_timeout_rate", better="lower")
    quantile("probe_p50", "probe_p95")
    mean("latency", "build_ms", "ms", "lower")
    quantile("write_to_ranked_p50", "write_to_ranked_p95")
    mean("latency", "unranked_rate", better="lower")
    return out


def as_kpi(record: Record, tag: str | None = None) -> Kpi:
    group, name, value, n, unit, better = record
    return Kpi(
        group=KpiGroup(group),
        name=name,
        value=value,
        unit=unit,
        better=Better(better),
        n=n,
        tag=tag,
    )


def kpis(cases: list[CaseResult]) -> list[Kpi]:
    return kpis_of(tally(cases))


def kpis_of(t: Tally) -> list[Kpi]:
    return [as_kpi(r) for r in records(t)]


TAG_KPIS = (
    "hit_at_1",
    "hit_at_3",
    "pack_hit",
    "mrr",
    "extractive_answer",
    "evidence_recall",
    "evidence_mrr",
    "extractive_f1",
    "model_f1",
    "abstain_probes",
    "judge_answer",
)


def tag_kpis(cases: list[CaseResult]) -> list[Kpi]:
    """The accuracy KPIs over each probe tag's probes (`category:temporal`...), so a benchmark
    imported with categories reports each category's recall in the JSON itself.

    Only the KPIs a tag's probes define are listed: a tag without evidence writes has no
    evidence recall, and a row of empty numbers per tag would bury the ones that exist. They
    stay out of the scorecard, which compares and gates on the overall numbers."""
    done = [c for c in cases if c.status is CaseStatus.done and c.kind == "scenario"]
    # Each case's scored probes by tag, in one pass: a tag's KPIs read its probes alone,
    # those reported apart included, and only the accuracy KPIs listed here are kept.
    by_tag: dict[str, list[Seen]] = defaultdict(list)
    for case in done:
        probes: dict[str, list[ProbeResult]] = defaultdict(list)
        for p in case.probes:
            if p.scored:
                for tag in dict.fromkeys(p.tags):
                    probes[tag].append(p)
        for tag, picked in probes.items():
            by_tag[tag].append(Seen.of(case, picked))
    out: list[Kpi] = []
    for tag in sorted(by_tag):
        # A tally per case, then merged, as every tally is: the sums add up in one order.
        each = []
        for seen in by_tag[tag]:
            numbers = [0.0] * _WIDTH
            _add_means(numbers, seen, TAG_KPIS)
            each.append(Tally(tuple(numbers)))
        out += [
            as_kpi(r, tag)
            for r in records(merge(each))
            if r[1] in TAG_KPIS and r[0] == "accuracy" and r[2] is not None
        ]
    return out
