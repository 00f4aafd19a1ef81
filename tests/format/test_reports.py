"""Reports and comparisons group probes by tag."""

from __future__ import annotations

from datetime import UTC, datetime

from memeval.engines.naive import NaiveEngine
from memeval.engines.types import Pack, TurnContext
from memeval.report.compare import compare
from memeval.report.html import render_html
from memeval.report.markdown import render
from memeval.results import CaseResult, RunReport
from memeval.scoring.kpis import kpis
from tests.format.helpers import run, scenario

TAGGED = """
kind: scenario
name: tagged
title: Two kinds of question
log_probes: false
start: 2026-03-02
threads:
  - id: t
    exchanges:
      - {user: The offsite is in Porto., reply: Noted.}
      - {user: The caterer is Casa Lume., reply: Noted.}
probes:
  - id: city
    question: Where is the offsite?
    style: lexical
    expect: [Porto]
    tags: [category:single-hop, difficulty:easy]
  - id: caterer
    question: Who caters the offsite?
    style: lexical
    expect: [Casa Lume]
    tags: [category:single-hop]
"""


class Forgetful(NaiveEngine):
    """Recalls nothing for probes: every tagged probe misses."""

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        pack = await super().pre_turn(tenant, ctx)
        return pack if ctx.log else Pack(markdown="# Context\n- nothing relevant\n")


def report(label: str, cases: list[CaseResult]) -> RunReport:
    return RunReport(
        run_id=f"run-{label}",
        label=label,
        engine=label,
        suite="inline",
        started_at=datetime(2026, 12, 1, tzinfo=UTC),
        cases=cases,
        kpis=kpis(cases),
    )


def test_the_report_has_a_row_per_probe_tag():
    good = report("naive", [run(scenario(TAGGED), NaiveEngine())])
    text = render(good)
    assert "## Scores by probe tag" in text
    row = next(line for line in text.splitlines() if line.startswith("| category:single-hop"))
    assert "| 4 |" in row and "100.0%" in row  # two probes, both phases
    assert "| difficulty:easy | all | 2 |" in text
    assert "category:single-hop" in render_html(good)


def test_compare_tests_each_tag_as_its_own_scope():
    probe_set = scenario(TAGGED)
    good = [report("naive", [run(probe_set, NaiveEngine())]) for _ in range(1)]
    bad = [report("forgetful", [run(probe_set, Forgetful())]) for _ in range(1)]
    compared = compare([*good, *bad])
    scopes = {t.scope: t for t in compared.comparisons[0].flips}
    tagged = scopes["probes · tag category:single-hop"]
    assert tagged.units == 4 and tagged.lost == 4 and tagged.gained == 0
    assert scopes["probes · tag difficulty:easy"].lost == 2
