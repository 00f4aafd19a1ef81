"""One verdict line a person can act on: the verdict's own direction first, what went the
other way after a "but", and latency or cost never called worse."""

from __future__ import annotations

from memeval.report.compare import Verdict, compare
from memeval.report.compare_markdown import move_rows
from tests.report.factory import make_report

WEAK = {"temporal": 0.3, "conflict": 0.3, "multihop": 0.3}


def test_an_improvement_that_costs_a_dimension_leads_with_the_improvement():
    base = make_report(label="base", rates=WEAK, seed=1)
    strong = {"temporal": 0.9, "conflict": 0.9, "multihop": 0.9, "abstention": 0.2}
    cand = make_report(label="cand", rates=strong, seed=2)
    (c,) = compare([base, cand], resamples=300).comparisons
    assert c.headline == (
        "cand vs base: clear improvement — better on composite; dimensions temporal, "
        "conflict, multihop; but worse on dimensions abstention"
    )


def test_a_slower_candidate_is_changed_not_worse_and_never_gates():
    base = make_report(label="base", seed=1)
    slow = make_report(label="slow", seed=1)
    for case in slow.cases:
        for timing in case.timings:
            timing.ms *= 10
    (c,) = compare([base, slow], resamples=300).comparisons
    latency = [m for m in c.moves if m.group == "latency" and m.unit == "ms"]
    assert latency and all(m.verdict in (Verdict.changed, Verdict.unmeasured) for m in latency)
    assert any(m.verdict is Verdict.changed for m in latency)
    assert c.verdict == "within noise" and c.headline == "slow vs base: within noise"
    shown = {r.cells[1]: r.cells[-1] for r in move_rows(c)}
    assert shown["probe_p50"] == "changed (never gates)"
