"""Every number a run is judged on, as one list: the composite, each dimension, then the KPIs.

Reports, confidence intervals, comparisons and CI gates all read this one list, so a number
cannot mean one thing in the markdown and another in a verdict.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from memeval.results import CaseResult, Kpi
from memeval.scoring.kpis import Record, Tally, as_kpi, composite, records, tally

COMPOSITE = "composite"
PACK_HIT = "pack_hit"


def scorecard(cases: list[CaseResult]) -> list[Kpi]:
    return card_of(tally(cases))


def card_of(t: Tally) -> list[Kpi]:
    return [as_kpi(r) for r in card_records(t)]


def card_records(t: Tally) -> list[Record]:
    """The scorecard as plain rows: a bootstrap reads it thousands of times, and once per
    case, where a model per number cost more than the numbers."""
    dims, fixtures = t.dimensions(), t.fixtures()
    head = ("composite", COMPOSITE, composite(dims), sum(fixtures.values()), "share", "higher")
    per_dimension = [("dimension", d, v, fixtures[d], "share", "higher") for d, v in dims.items()]
    return [head, *per_dimension, *records(t)]


def card_values(t: Tally) -> dict[str, float | None]:
    """`values(card_of(t))` without building a model per number."""
    return {r[1]: r[2] for r in card_records(t)}


def values(records: Iterable[Kpi]) -> dict[str, float | None]:
    return {k.name: k.value for k in records}


def by_case(cases: Iterable[CaseResult]) -> dict[str, list[CaseResult]]:
    """A case's trials stay together: they share the case's content, so they resample as one."""
    out: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        out[case.case_id].append(case)
    return dict(out)


def strata(cases: Iterable[CaseResult]) -> dict[str, list[str]]:
    """Case ids by dimension, scenarios apart, each id once."""
    out: dict[str, dict[str, None]] = defaultdict(dict)  # a dict keeps order, and finds fast
    for case in cases:
        out[case.dimension or case.kind].setdefault(case.case_id)
    return {layer: list(ids) for layer, ids in out.items()}
