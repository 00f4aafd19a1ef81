"""`memeval compare`: same engine twice is noise, naive against reference is a regression."""

from __future__ import annotations

import pytest

from memeval.errors import UsageError
from memeval.report.compare import GroupBy, Verdict, compare
from memeval.report.compare_markdown import render_compare
from memeval.results import Phase
from tests.cli_here import run_cli_here
from tests.report.factory import PROBES, SCENARIOS, difficulty, make_report

FAST = 400


def hits_to_break(count: int, rate: float = 0.8) -> set[str]:
    """One probe per scenario that hits at `rate`, for the first `count` scenarios."""
    keys = set()
    for s in range(count):
        case_id = f"lifecycle/scenario_{s:02d}"
        keys.add(
            next(
                key
                for i in range(PROBES)
                if difficulty(key := f"{case_id}:{Phase.recall.value}:p{i}") < rate
            )
        )
    return keys


def test_two_runs_of_the_same_engine_are_within_noise(reference_run, reference_rerun):
    result = compare([reference_run, reference_rerun])
    [c] = result.comparisons
    assert c.verdict == "within noise"
    assert c.headline == "reference-again vs reference: within noise"
    assert all(m.verdict in (Verdict.noise, Verdict.unmeasured) for m in c.moves)
    latency = [m for m in c.moves if m.unit == "ms" and m.delta is not None]
    assert latency and all(m.delta != 0 for m in latency)  # timings differ, yet no move
    assert all(t.lost == t.gained == 0 for t in c.flips)
    assert "**reference-again vs reference: within noise**" in render_compare(result)


def test_naive_against_reference_is_a_clear_regression_naming_the_dimensions(
    reference_run, naive_run
):
    result = compare([naive_run, reference_run], baseline="reference")
    [c] = result.comparisons
    assert (c.baseline, c.candidate, c.verdict) == ("reference", "naive", "clear regression")
    worse = {m.name for m in c.moved(Verdict.worse)}
    assert {"composite", "temporal", "conflict", "multihop", "pack_hit"} <= worse
    assert not worse & {"abstention", "provenance"}  # these did not change
    assert not c.moved(Verdict.better)
    assert c.headline.startswith(
        "naive vs reference: clear regression — worse on composite; "
        "dimensions temporal, conflict, multihop; KPIs "
    )
    by_scope = {t.scope: t for t in c.flips}
    assert by_scope["checks · conflict"].verdict is Verdict.worse
    assert by_scope["checks · conflict"].p < 0.001
    assert by_scope["checks · provenance"].lost == 0
    md = render_compare(result)
    assert "- **naive vs reference: clear regression — worse on composite;" in md
    assert "| dimension | temporal |" in md and "**worse**" in md


def test_one_flipped_probe_is_never_a_move(reference_run):
    flipped = make_report(label="one-flip", flip=hits_to_break(1), seed=5)
    [c] = compare([reference_run, flipped], resamples=FAST).comparisons
    pack_hit = next(m for m in c.moves if m.name == "pack_hit")
    assert pack_hit.delta < 0
    assert pack_hit.verdict is Verdict.noise
    recall = next(t for t in c.flips if t.scope == "probes · pack hit · recall")
    assert (recall.lost, recall.gained, recall.p) == (1, 0, 1.0)
    assert recall.verdict is Verdict.noise
    assert c.verdict == "within noise"


def test_one_flip_is_not_a_move_even_when_the_run_has_a_single_case():
    base = make_report(label="a", scenarios=1, fixtures=0)
    cand = make_report(label="b", scenarios=1, fixtures=0, flip=hits_to_break(1))
    [c] = compare([base, cand], resamples=FAST).comparisons
    pack_hit = next(m for m in c.moves if m.name == "pack_hit")
    assert pack_hit.low == pack_hit.high < 0  # one case: the bootstrap alone is sure
    assert (pack_hit.verdict, pack_hit.why) == (Verdict.noise, "one case carries the change")


def test_one_probe_lost_in_every_scenario_is_a_move(reference_run):
    cand = make_report(label="broad", flip=hits_to_break(SCENARIOS), seed=6)
    [c] = compare([reference_run, cand], resamples=FAST).comparisons
    worse = {m.name for m in c.moved(Verdict.worse)}
    assert {"pack_hit", "pack_hit_recall"} <= worse
    assert "composite" not in worse


def test_repeats_are_pooled_and_their_spread_reported(reference_run, naive_run):
    again = make_report(label="reference", run_id="run-reference-2", hit=0.7, seed=9)
    result = compare([reference_run, again, naive_run], resamples=FAST)
    ref = next(g for g in result.groups if g.name == "reference")
    assert ref.runs == ["run-reference-1", "run-reference-2"]
    assert ref.results == 2 * len(reference_run.cases)
    assert ref.repeats["pack_hit"].n == 2 and ref.repeats["pack_hit"].sd > 0
    assert result.comparisons[0].verdict == "clear regression"


def test_a_sweep_compares_every_model_on_the_common_subset(reference_run, naive_run):
    small = make_report(label="small", fixtures=3, seed=4)
    result = compare([reference_run, naive_run, small], resamples=FAST)
    assert len(result.common) == SCENARIOS + 5 * 3
    assert {g.name: g.outside for g in result.groups} == {
        "reference": 25,
        "naive": 25,
        "small": 0,
    }
    composite = {name: card[0] for name, card in result.table.items()}
    assert all(k.name == "composite" and k.n == 15 for k in composite.values())
    assert "## Scorecard on the common subset" in render_compare(result)


def test_grouping_needs_two_configurations(reference_run):
    again = make_report(label="reference", run_id="another", seed=8)
    with pytest.raises(UsageError, match="single group") as err:
        compare([reference_run, again])
    assert "--by run" in err.value.fix
    by_run = compare([reference_run, again], by=GroupBy.run, resamples=FAST)
    assert by_run.comparisons[0].verdict == "within noise"
    with pytest.raises(UsageError, match="no group or run `nope`"):
        compare([reference_run, again], by=GroupBy.run, baseline="nope")


def test_compare_command_prints_tables_writes_markdown_and_html_and_gates(
    tmp_path, reference_run, reference_rerun, naive_run
):
    files = []
    for report in (reference_run, reference_rerun, naive_run):
        path = tmp_path / f"{report.label}.json"
        path.write_text(report.model_dump_json())
        files.append(str(path))
    html = tmp_path / "cmp" / "compare.html"
    md = tmp_path / "cmp" / "compare.md"
    quick = ("--resamples", "200")
    shown = run_cli_here(
        "compare", *files, "--baseline", "reference", "--html", str(html), "--md", str(md), *quick
    )
    assert shown.returncode == 0, shown.stderr
    # The terminal gets one verdict line per candidate and tables, not raw markdown.
    lines = shown.stdout.splitlines()
    assert "reference-again vs reference: within noise" in lines
    assert any(line.startswith("naive vs reference: clear regression") for line in lines)
    assert "- **" not in shown.stdout and "|---|" not in shown.stdout
    assert "┃ metric" in shown.stdout
    # The files keep the markdown and the HTML.
    assert "- **reference-again vs reference: within noise**" in md.read_text()
    assert "- **naive vs reference: clear regression" in md.read_text()
    assert html.read_text().startswith("<!doctype html>")
    gated = run_cli_here("compare", files[0], files[2], "--fail-on-regression", *quick)
    assert gated.returncode == 4
    assert "naive vs reference: clear regression" in gated.stderr
    calm = run_cli_here("compare", files[0], files[1], "--fail-on-regression", *quick)
    assert calm.returncode == 0, calm.stderr
