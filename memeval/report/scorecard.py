"""Every number a run is judged on, as one list: the composite, each dimension, then the KPIs.

Reports, confidence intervals, comparisons and CI gates all read this one list, so a number
cannot mean one thing in the markdown and another in a verdict.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from memeval.results import Better, CaseResult, Kpi, KpiGroup
from memeval.scoring.kpis import Tally, composite, kpis_of, records, tally

COMPOSITE = "composite"
PACK_HIT = "pack_hit"


def scorecard(cases: list[CaseResult]) -> list[Kpi]:
    return card_of(tally(cases))


def card_of(t: Tally) -> list[Kpi]:
    dims, fixtures = t.dimensions(), t.fixtures()
    head = Kpi(
        group=KpiGroup.composite,
        name=COMPOSITE,
        value=composite(dims),
        unit="share",
        better=Better.HIGHER,
        n=sum(fixtures.values()),
    )
    per_dimension = [
        Kpi(
            group=KpiGroup.dimension,
            name=d,
            value=v,
            unit="share",
            better=Better.HIGHER,
            n=fixtures[d],
        )
        for d, v in dims.items()
    ]
    return [head, *per_dimension, *kpis_of(t)]


def card_values(t: Tally) -> dict[str, float | None]:
    """`values(card_of(t))` without building a model per number: a bootstrap asks this
    thousands of times."""
    dims = t.dimensions()
    return {COMPOSITE: composite(dims), **dims, **{r[1]: r[2] for r in records(t)}}


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
    out: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        pool = out[case.dimension or case.kind]
        if case.case_id not in pool:
            pool.append(case.case_id)
    return dict(out)
