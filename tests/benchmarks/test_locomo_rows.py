"""The standard rows on LoCoMo's development split: `oracle` (the evidence turns alone) and
`full-context` (the whole conversation), category 5 counted apart, and the audited answers."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from memeval.engines.full_context import FullContextEngine
from memeval.engines.registry import create
from memeval.importers import locomo, sources
from memeval.results import CaseResult, Kpi
from memeval.runner import run_case
from memeval.scoring.kpis import APART, kpis, tag_kpis
from memeval.suites.scenario import Scenario

HERE = Path(__file__).resolve()
DEV5 = next(
    (
        p
        for p in (HERE.parents[n] / "shared/benchmarks/locomo/locomo-dev5.json" for n in (3, 4))
        if p.is_file()
    ),
    HERE.parents[3] / "shared/benchmarks/locomo/locomo-dev5.json",
)
needs_dev = pytest.mark.skipif(not DEV5.is_file(), reason=f"LoCoMo dev copy absent: {DEV5}")


def run(scenario: Scenario, engine: str | FullContextEngine) -> CaseResult:
    built = create(engine) if isinstance(engine, str) else engine
    return asyncio.run(run_case(scenario, built, run_id="rows"))


def overall(results: list[CaseResult]) -> dict[str, Kpi]:
    return {k.name: k for k in kpis(results)}


@pytest.fixture(scope="module")
def dev() -> list[Scenario]:
    return [locomo.scenario(c) for c in locomo.read(DEV5)]


@needs_dev
def test_oracle_recalls_every_evidence_turn_on_the_dev_split(dev):
    results = [run(s, "oracle") for s in dev]
    numbers = overall(results)
    assert numbers["evidence_recall"].value == 1.0
    assert numbers["evidence_mrr"].value == 1.0
    assert numbers["evidence_recall"].n > 1000  # both phases of every counted question
    assert numbers["pack_tokens"].value < 200  # a few turns, not the conversation


@needs_dev
def test_full_context_holds_the_whole_conversation_and_says_when_it_is_cut(dev):
    whole = run(dev[0], "full-context")
    numbers = overall([whole])
    assert numbers["evidence_recall"].value == 1.0
    assert numbers["pack_tokens"].value > 10_000
    assert all("## Truncated" not in p.pack for p in whole.probes)
    cut = run(dev[0], FullContextEngine(max_tokens=2_000))
    assert all("## Truncated: the" in p.pack for p in cut.probes)
    assert all(p.pack_tokens <= 2_000 for p in cut.probes)
    assert overall([cut])["evidence_recall"].value < 0.5  # the oldest sessions are gone


@needs_dev
def test_category_5_is_counted_apart_by_default(dev):
    result = run(dev[0], "oracle")
    adversarial = [p for p in result.probes if "category:adversarial" in p.tags]
    others = [p for p in result.probes if "category:adversarial" not in p.tags]
    assert adversarial and all(APART in p.tags for p in adversarial)
    assert overall([result])["pack_hit"].n == len(others)
    by_tag = {(k.tag, k.name): k for k in tag_kpis([result])}
    assert by_tag["category:adversarial", "abstain_probes"].n == len(adversarial)
    assert by_tag[APART, "pack_hit"].n == len(adversarial)
    counted_all = next(sources.load("locomo", DEV5, {"categories": "1-5"}))
    everything = run(counted_all, "oracle")
    assert overall([everything])["pack_hit"].n == len(everything.probes)


@needs_dev
def test_audited_gold_answers_are_tagged_so_reports_show_both(dev):
    found = Counter(
        s.name.removeprefix("locomo-") for s in dev for p in s.probes if locomo.GOLD_WRONG in p.tags
    )
    listed = Counter(q.sample_id for q in locomo.audit().questions)
    assert found == {name: listed[name] for name in found}
    assert sum(found.values()) == sum(listed[s.name.removeprefix("locomo-")] for s in dev) > 0
    result = run(dev[0], "oracle")
    by_tag = {(k.tag, k.name): k for k in tag_kpis([result])}
    wrong = by_tag[locomo.GOLD_WRONG, "pack_hit"].n
    kept = by_tag[locomo.GOLD_KEPT, "pack_hit"].n
    assert wrong + kept == overall([result])["pack_hit"].n


def test_categories_are_read_or_refused():
    assert locomo.parse_categories("1-4") == locomo.COUNTED
    assert locomo.parse_categories("all") == frozenset(locomo.Category)
    assert locomo.Category.adversarial in locomo.parse_categories("4,5")
    from memeval.errors import UsageError

    with pytest.raises(UsageError, match="categories"):
        locomo.parse_categories("six")
    with pytest.raises(UsageError, match="takes no option"):
        sources.parse("locomo:/tmp/x.json?colour=red")
