"""Compares runs and says which differences are signal: better, worse, or within noise.

A number is called a move only when three things hold. The 95% interval of the paired
bootstrap over cases (both sides resampled on the same cases) excludes zero; the change keeps
its sign with any single case left out, so one case, and a fortiori one flipped probe, can never
be a move; and a timing change exceeds the jitter between runs of the same code. The probes and
checks behind the numbers are also tested one by one with McNemar's exact test.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memeval.errors import UsageError
from memeval.report.resampling import Counts, block_rows, resample_weights, weighted_tallies
from memeval.report.scorecard import (
    COMPOSITE,
    PACK_HIT,
    by_case,
    card_of,
    card_values,
    scorecard,
    strata,
    values,
)
from memeval.report.stats import (
    RESAMPLES,
    SEED,
    Spread,
    mcnemar,
    percentile_interval,
    spread,
)
from memeval.results import CaseResult, CaseStatus, Kpi, Phase, RunReport
from memeval.scoring.kpis import Tally, merge, tally

ALPHA = 0.05
MIN_MS = 2.0
"""A latency change below this many milliseconds is timer jitter, whatever its interval."""
MIN_MS_RELATIVE = 0.10
"""Nor is a change of less than this share of the baseline's latency a move."""
UNGATED = frozenset({"latency", "cost"})
"""Groups that depend on the machine or on prices, not on the engine: shown, never gated."""
EXAMPLES = 5
HEADLINES = (COMPOSITE, PACK_HIT)
RULE = (
    "A move needs a 95% paired-bootstrap interval over cases that excludes 0 and a change no "
    "single case carries, so a lone flipped probe is never a move. Latency and cost never gate."
)


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GroupBy(StrEnum):
    label = "label"
    engine = "engine"
    run = "run"


class Verdict(StrEnum):
    better = "better"
    worse = "worse"
    noise = "within noise"
    changed = "changed"  # beyond noise in a group that never gates: latency, cost
    unmeasured = "n/a"


class Group(Model):
    name: str
    runs: list[str]
    results: int = Field(description="Case results pooled on the common subset.")
    outside: int = Field(description="Case ids this group ran outside the common subset.")
    repeats: dict[str, Spread] = Field(
        default_factory=dict, description="Composite and pack hit across this group's runs."
    )


class Move(Model):
    group: str
    name: str
    unit: str
    better: str
    base: float | None
    cand: float | None
    delta: float | None
    low: float | None
    high: float | None
    verdict: Verdict
    why: str

    @property
    def gated(self) -> bool:
        return self.group not in UNGATED


class Flip(Model):
    case_id: str
    item: str
    text: str
    base: float = Field(description="Share of passes on the baseline side (over trials).")
    cand: float


class FlipTable(Model):
    scope: str
    units: int
    lost: int = Field(description="Passed on the baseline, failed on the candidate.")
    gained: int
    p: float
    verdict: Verdict
    examples: list[Flip]


class Comparison(Model):
    baseline: str
    candidate: str
    moves: list[Move]
    flips: list[FlipTable]

    def moved(self, verdict: Verdict) -> list[Move]:
        return [m for m in self.moves if m.gated and m.verdict is verdict]

    @property
    def verdict(self) -> str:
        """Called clear when the headline number itself moved: the composite, else pack hit.

        A side effect going the other way (a smaller pack from an engine that recalls less) is
        named in the headline but does not redeem a collapsed composite. A KPI one side cannot
        produce (spurious conflicts from an engine that reports none) is n/a, never a move.
        """
        lead = next(
            (
                m.verdict
                for name in HEADLINES
                for m in self.moves
                if m.name == name and m.verdict is not Verdict.unmeasured
            ),
            Verdict.unmeasured,
        )
        if lead is Verdict.worse:
            return "clear regression"
        if lead is Verdict.better:
            return "clear improvement"
        worse, better = self.moved(Verdict.worse), self.moved(Verdict.better)
        if worse and better:
            return "mixed"
        return "regression" if worse else "improvement" if better else Verdict.noise.value

    @property
    def headline(self) -> str:
        """The one line to act on: the verdict, then what moved its way, then what moved the
        other way after a "but" (an improvement that costs a dimension is still one, and the
        reader is told what to check before adopting it)."""
        verdict = self.verdict
        ahead = Verdict.better if verdict.endswith("improvement") else Verdict.worse
        parts = [
            f"{way.value} on {named}"
            for way in (ahead, Verdict.worse if ahead is Verdict.better else Verdict.better)
            if (named := self._named(way))
        ]
        tail = f" — {'; but '.join(parts)}" if parts else ""
        return f"{self.candidate} vs {self.baseline}: {verdict}{tail}"

    def _named(self, verdict: Verdict) -> str:
        """E.g. "composite; dimensions temporal, decay; KPIs leaks"."""
        moved = self.moved(verdict)
        kinds = (
            ("", [m.name for m in moved if m.group == COMPOSITE]),
            ("dimensions ", [m.name for m in moved if m.group == "dimension"]),
            ("KPIs ", [m.name for m in moved if m.group not in (COMPOSITE, "dimension")]),
        )
        return "; ".join(f"{kind}{', '.join(names)}" for kind, names in kinds if names)


class CompareReport(Model):
    by: GroupBy
    baseline: str
    groups: list[Group]
    common: list[str] = Field(description="Case ids every run has a done result for.")
    comparisons: list[Comparison]
    resamples: int
    per_pass: list[str] = Field(description="Sums shown per pass over the common subset.")
    table: dict[str, list[Kpi]] = Field(description="Every group's scorecard on the common subset.")


def group_runs(reports: Iterable[RunReport], by: GroupBy) -> dict[str, list[RunReport]]:
    """Runs sharing a label (or engine) are repeats of one configuration, pooled together."""
    key: dict[GroupBy, Callable[[RunReport], str]] = {
        GroupBy.label: lambda r: r.label,
        GroupBy.engine: lambda r: r.engine,
        GroupBy.run: lambda r: r.run_id,
    }
    groups: dict[str, list[RunReport]] = defaultdict(list)
    for report in reports:
        groups[key[by](report)].append(report)
    return dict(groups)


def common_cases(reports: Iterable[RunReport]) -> list[str]:
    """Case ids every run finished: in a sweep, the models are compared on the same questions."""
    sets = [{c.case_id for c in r.cases if c.status is CaseStatus.done} for r in reports]
    return sorted(set.intersection(*sets)) if sets else []


def compare(
    reports: list[RunReport],
    *,
    baseline: str | None = None,
    by: GroupBy = GroupBy.label,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> CompareReport:
    """`baseline` names a group, or a run inside one; by default the first group given."""
    groups = group_runs(reports, by)
    if len(groups) < 2:
        raise UsageError(
            f"the runs given form a single group `{next(iter(groups), '')}` by {by.value}",
            fix="give runs of at least two configurations, or compare runs one by one: --by run",
        )
    base_name = _baseline(groups, baseline)
    common = common_cases(reports)
    if not common:
        raise UsageError(
            "the runs have no finished case in common",
            fix="compare runs of the same suite, or rerun the cases that failed",
        )
    keep = set(common)
    pools = {
        name: by_case(
            c for r in runs for c in r.cases if c.case_id in keep and c.status is CaseStatus.done
        )
        for name, runs in groups.items()
    }
    layers = strata(c for cases in pools[base_name].values() for c in cases)
    sums = sums_over_results([c for pool in pools.values() for c in _flat(pool, common)])
    sides = {name: Side(name, pool, sums) for name, pool in pools.items()}
    comparisons = [
        _compare_pair(sides[base_name], side, layers, resamples, seed)
        for name, side in sides.items()
        if name != base_name
    ]
    return CompareReport(
        by=by,
        baseline=base_name,
        groups=[_group(name, runs, pools[name], keep) for name, runs in groups.items()],
        common=common,
        comparisons=comparisons,
        resamples=resamples,
        per_pass=sorted(sums),
        table={name: side.card(common) for name, side in sides.items()},
    )


def _baseline(groups: dict[str, list[RunReport]], wanted: str | None) -> str:
    if wanted is None:
        return next(iter(groups))
    if wanted in groups:
        return wanted
    for name, runs in groups.items():
        if any(wanted in (r.run_id, r.label) for r in runs):
            return name
    raise UsageError(
        f"no group or run `{wanted}` among the runs compared",
        fix=f"use one of: {', '.join(groups)}",
    )


def _group(
    name: str, runs: list[RunReport], pool: dict[str, list[CaseResult]], keep: set[str]
) -> Group:
    repeats: dict[str, Spread] = {}
    if len(runs) > 1:
        per_run = [values(scorecard([c for c in r.cases if c.case_id in keep])) for r in runs]
        for metric in HEADLINES:
            seen = [v for row in per_run if (v := row.get(metric)) is not None]
            if len(seen) > 1:
                repeats[metric] = spread(seen)
    outside = {c.case_id for r in runs for c in r.cases} - keep
    return Group(
        name=name,
        runs=[r.run_id for r in runs],
        results=sum(len(v) for v in pool.values()),
        outside=len(outside),
        repeats=repeats,
    )


def _flat(pool: dict[str, list[CaseResult]], ids: Iterable[str]) -> list[CaseResult]:
    return [c for i in ids for c in pool[i]]


def sums_over_results(cases: list[CaseResult]) -> frozenset[str]:
    """The scorecard numbers that add up over results, such as beliefs built or dollars spent.

    Counting every result twice doubles them and leaves shares, means and percentiles alone.
    Compared as they stand, a run with two trials would look twice as costly as one.
    """
    once, twice = values(scorecard(cases)), values(scorecard(cases + cases))
    return frozenset(
        name
        for name, value in once.items()
        if value
        and (doubled := twice.get(name)) is not None
        and math.isclose(doubled, 2 * value, rel_tol=0.05)
    )


@dataclass(frozen=True)
class Side:
    """One group's pooled results, scored with its sums taken per pass over the cases."""

    name: str
    pool: dict[str, list[CaseResult]]
    sums: frozenset[str]
    tallies: dict[str, Tally] = field(default_factory=dict, compare=False, repr=False)

    def each(self, ids: Sequence[str]) -> list[Tally]:
        """Each case's tally (of all its results), worked out once whatever asks for it."""
        for i in ids:
            if i not in self.tallies:
                self.tallies[i] = tally(self.pool[i])
        return [self.tallies[i] for i in ids]

    def card(self, ids: list[str]) -> list[Kpi]:
        t = merge(self.each(ids))
        passes = _passes(t, len(ids))
        return [
            k.model_copy(update={"value": k.value / passes})
            if k.name in self.sums and k.value is not None and passes != 1.0
            else k
            for k in card_of(t)
        ]

    def values(self, t: Tally, cases: int) -> dict[str, float | None]:
        """The scorecard of `t`, the tally of `cases` drawn cases (repeats counted)."""
        passes = _passes(t, cases)
        return {
            name: value / passes if name in self.sums and value is not None and passes != 1.0
            else value
            for name, value in card_values(t).items()
        }  # fmt: skip


def _passes(t: Tally, cases: int) -> float:
    """How many passes over the cases their results make: every result counts one in
    `spent`, so a pooled group with two trials makes two."""
    return t.spent / cases if cases else 1.0


def _deltas(
    before: dict[str, float | None], after: dict[str, float | None]
) -> dict[str, float | None]:
    return {
        name: None if (b := before.get(name)) is None or (a := after.get(name)) is None else a - b
        for name in before
    }


def _paired(
    base: Side, cand: Side, units: Sequence[str], weights: Iterable[Counts]
) -> Iterator[dict[str, float | None]]:
    """Each row of `weights` (how often each of `units` is drawn): the candidate's scorecard
    less the baseline's, both on the very same draw."""
    mine, theirs = base.each(units), cand.each(units)
    for block in weights:
        drawn: list[int] = block.sum(axis=1).tolist()
        rows = zip(weighted_tallies(mine, block), weighted_tallies(theirs, block), strict=True)
        for (b, c), n in zip(rows, drawn, strict=True):
            yield _deltas(base.values(b, n), cand.values(c, n))


def _bootstrap(
    base: Side, cand: Side, layers: dict[str, list[str]], resamples: int, seed: int
) -> dict[str, list[float]]:
    """`stats.bootstrap(layers, deltas)` on numpy: the same seeded draws, each resample's
    tallies a matrix product rather than a merge of thousands of cases' tallies."""
    pools = [units for units in layers.values() if units]
    units = [unit for pool in pools for unit in pool]
    if not units:  # every resample draws nothing: the deltas of no case, each time
        nothing = _deltas(base.values(merge([]), 0), cand.values(merge([]), 0))
        return {k: [v] * resamples for k, v in nothing.items() if v is not None}
    rows = min(block_rows(base.each(units)), block_rows(cand.each(units)))
    weights = resample_weights([len(p) for p in pools], resamples, seed, rows)
    samples: dict[str, list[float]] = defaultdict(list)
    for row in _paired(base, cand, units, weights):
        for name, value in row.items():
            if value is not None:
                samples[name].append(value)
    return samples


def _left_out(base: Side, cand: Side, ids: list[str]) -> Iterator[dict[str, float | None]]:
    """The deltas with each case left out in turn: every case once, but the one."""
    rows = min(block_rows(base.each(ids)), block_rows(cand.each(ids)))

    def blocks() -> Iterator[Counts]:
        for start in range(0, len(ids), rows):
            block = np.ones((min(rows, len(ids) - start), len(ids)), dtype=np.int32)
            block[np.arange(len(block)), start + np.arange(len(block))] = 0
            yield block

    return _paired(base, cand, ids, blocks())


def _compare_pair(
    base: Side, cand: Side, layers: dict[str, list[str]], resamples: int, seed: int
) -> Comparison:
    ids = sorted(base.pool)
    before = base.card(ids)
    after = cand.values(merge(cand.each(ids)), len(ids))
    point = _deltas(base.values(merge(base.each(ids)), len(ids)), after)
    samples = _bootstrap(base, cand, layers, resamples, seed)
    left_out = list(_left_out(base, cand, ids))
    moves = []
    for k in before:
        delta = point.get(k.name)
        low, high = percentile_interval(samples.get(k.name, []) if delta is not None else [])
        steady = delta is not None and all(
            (d := row.get(k.name)) is not None and d * delta > 0 for row in left_out
        )
        verdict, why = _verdict(k, delta, low, high, steady)
        moves.append(
            Move(
                group=k.group,
                name=k.name,
                unit=k.unit,
                better=k.better,
                base=k.value,
                cand=after.get(k.name),
                delta=delta,
                low=low,
                high=high,
                verdict=verdict,
                why=why,
            )
        )
    return Comparison(
        baseline=base.name,
        candidate=cand.name,
        moves=moves,
        flips=_flips(base.pool, cand.pool, ids),
    )


def _verdict(
    k: Kpi, delta: float | None, low: float | None, high: float | None, steady: bool
) -> tuple[Verdict, str]:
    if delta is None or low is None or high is None:
        return Verdict.unmeasured, "not measured on both sides"
    if delta == low == high == 0.0:
        return Verdict.noise, "unchanged"
    if low <= 0.0 <= high:
        return Verdict.noise, "95% CI includes 0"
    if not steady:
        return Verdict.noise, "one case carries the change"
    if k.unit == "ms" and abs(delta) < max(MIN_MS, MIN_MS_RELATIVE * abs(k.value or 0.0)):
        return Verdict.noise, "within timing jitter"
    if k.group in UNGATED:
        return Verdict.changed, "never gates"
    higher = delta > 0
    good = higher == (k.better == "higher")
    return (Verdict.better, "") if good else (Verdict.worse, "")


# ---- per probe and per check ----------------------------------------------------------------

Unit = tuple[str, str, str]  # case id, scope, item
Outcome = dict[Unit, tuple[str, list[bool]]]  # unit -> (its text, every pass/fail seen)


def _outcomes(pool: dict[str, list[CaseResult]], ids: list[str]) -> Outcome:
    """Every scored probe and every check, keyed so the same unit lines up across runs."""
    out: Outcome = {}
    for case in _flat(pool, ids):
        for p in case.probes:
            if p.scored:
                key = (case.case_id, f"probes · pack hit · {p.phase.value}", p.probe)
                out.setdefault(key, (p.question, []))[1].append(p.hit)
                # Each tag is its own scope too, so a comparison says which kind of question
                # (category, difficulty) moved.
                for tag in p.tags:
                    key = (case.case_id, f"probes · tag {tag}", f"{p.probe} · {p.phase.value}")
                    out.setdefault(key, (p.question, []))[1].append(p.hit)
        for index, ch in enumerate(case.checks):
            key = (case.case_id, f"checks · {case.dimension or case.kind}", f"#{index}")
            text = f"query {ch.query} {ch.kind}: {ch.value}"
            out.setdefault(key, (text, []))[1].append(ch.ok)
    return out


def _flips(
    base: dict[str, list[CaseResult]], cand: dict[str, list[CaseResult]], ids: list[str]
) -> list[FlipTable]:
    """McNemar per scope; with trials or repeats, a unit passes when it passed most times."""
    before, after = _outcomes(base, ids), _outcomes(cand, ids)
    scopes: dict[str, list[Flip]] = defaultdict(list)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for key, (text, seen) in before.items():
        if key not in after:
            continue
        case_id, scope, item = key
        b, a = sum(seen) / len(seen), sum(after[key][1]) / len(after[key][1])
        tally = counts[scope]
        tally[0] += 1
        if (b >= 0.5) != (a >= 0.5):
            tally[1 if b >= 0.5 else 2] += 1
            scopes[scope].append(Flip(case_id=case_id, item=item, text=text, base=b, cand=a))
    tables = []
    for scope in sorted(counts, key=_scope_order):
        units, lost, gained = counts[scope]
        p = mcnemar(lost, gained)
        verdict = Verdict.noise
        if p < ALPHA:
            verdict = Verdict.worse if lost > gained else Verdict.better
        flips = sorted(scopes[scope], key=lambda f: (f.cand > f.base, f.case_id, f.item))
        tables.append(
            FlipTable(
                scope=scope,
                units=units,
                lost=lost,
                gained=gained,
                p=p,
                verdict=verdict,
                examples=flips[:EXAMPLES],
            )
        )
    return tables


def _scope_order(scope: str) -> tuple[int, str]:
    phases = [f"probes · pack hit · {p.value}" for p in Phase]
    return (phases.index(scope), "") if scope in phases else (len(phases), scope)
