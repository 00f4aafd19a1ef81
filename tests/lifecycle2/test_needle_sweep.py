"""Needle position and seed for noise sweeps (`--noise SIZES --needle POSITIONS --seed N`)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from memeval.errors import UsageError
from memeval.results import CaseResult
from memeval.scoring.kpis import tag_kpis
from memeval.suites.haystack import Haystack, expand, parse_needles, parse_sizes
from memeval.suites.noise import distractors
from memeval.suites.scenario import Scenario
from tests.lifecycle2.engines import RecentOnly, served
from tests.lifecycle2.helpers import run, scenario


def variants(size: int, *needles: str, seed: int = 0) -> list[Scenario]:
    sweep = Haystack(sizes=[size], needles=list(needles), seed=seed)
    out = expand([scenario("lifecycle", "needle_in_noise")], sweep)
    return [v for v in out if isinstance(v, Scenario)]


def own_times(s: Scenario) -> tuple:  # type: ignore[type-arg]
    times = [line.at for lines in s.thread_lines.values() for line in lines]
    return min(times), max(times)


def test_positions_put_the_scenario_before_among_or_after_the_distractors() -> None:
    early, middle, late = variants(300, "early", "middle", "late")
    first, last = own_times(early)
    for v, before_share in ((early, 0.0), (middle, 0.5), (late, 1.0)):
        noise = distractors(v, v.noise, "main", 250)
        assert len(noise) == 250 and len({d.id for d in noise}) == 250
        before = sum(d.at < first for d in noise)
        assert sum(d.at > last for d in noise) + before == 250, "never among its own writes"
        assert before / 250 == pytest.approx(before_share, abs=0.01)
        assert v.probe_end > max(d.at for d in noise), "probes ask after every write"
    assert [v.id for v in (early, middle, late)] == [
        "lifecycle/needle_in_noise.n300.early",
        "lifecycle/needle_in_noise.n300.middle",
        "lifecycle/needle_in_noise.n300.late",
    ]
    assert "haystack:300-middle" in middle.probes[0].tags


def test_the_seed_changes_the_distractors_and_only_the_seed() -> None:
    (a,), (b,), (c,) = variants(200, "late"), variants(200, "late"), variants(200, "late", seed=9)
    texts = [[d.text for d in distractors(v, v.noise, "main", 150)] for v in (a, b, c)]
    assert texts[0] == texts[1] != texts[2]


def test_bad_sizes_and_positions_are_refused() -> None:
    assert parse_sizes("100,1000,10000") == [100, 1000, 10000]
    assert parse_needles("late,early") == ["early", "late"]
    for bad in ("", "0", "12,x", "2000000"):
        with pytest.raises(UsageError):
            parse_sizes(bad)
    with pytest.raises(UsageError):
        parse_needles("first")


def curve(results: list[CaseResult]) -> dict[tuple[str, str], float | None]:
    return {(k.tag or "", k.name): k.value for k in tag_kpis(results)}


def test_the_reference_engine_is_measured_per_size_and_position() -> None:
    results = [run(v, "reference") for v in variants(200, "early", "late")]
    got = curve(results)
    for where in ("early", "late"):
        assert got[(f"haystack:200-{where}", "pack_hit")] is not None
        assert got[(f"haystack:200-{where}", "mrr")] is not None


def test_an_engine_that_keeps_only_recent_writes_loses_an_early_needle() -> None:
    results = []
    for v in variants(200, "early", "late"):
        with served(RecentOnly()) as engine:
            results.append(run(v, engine))
    got = curve(results)
    assert got[("haystack:200-late", "pack_hit")] == 1.0
    assert got[("haystack:200-early", "pack_hit")] == 0.0


def test_a_resumed_sweep_finds_its_variants_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from memeval.evaluation.planning import RunRequest, _reopen, plan_new
    from memeval.evaluation.store import usable_store

    store = usable_store(f"sqlite:///{tmp_path / 'runs.db'}")
    sweep = Haystack(sizes=[50], needles=["early", "late"], seed=2)
    request = RunRequest(suite="lifecycle", only=["needle_in_noise"], haystack=sweep)
    planned = plan_new(store, request, Console(file=io.StringIO()))
    first = list(planned.jobs())
    jobs = list(_reopen(store, planned.run_id, Console(file=io.StringIO())).jobs())
    assert (
        sorted(j.case.id for j in jobs)
        == sorted(j.case.id for j in first)
        == [
            "lifecycle/needle_in_noise.n50.early",
            "lifecycle/needle_in_noise.n50.late",
        ]
    )
    assert all(j.options.haystack == sweep for j in jobs)
    resumed = {j.case.id: j.case for j in jobs}
    assert all(resumed[j.case.id] == j.case for j in first), "the same variants, seed and all"
