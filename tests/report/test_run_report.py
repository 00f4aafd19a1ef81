"""A run's three reports: what each must hold, and that `memeval report` rebuilds them."""

from __future__ import annotations

import json
import re

import pytest

from memeval.errors import UsageError
from memeval.report import default_out_dir, write_reports
from memeval.report.intervals import run_intervals
from memeval.report.markdown import literal, render
from memeval.results import RunReport
from memeval.store import PlannedCase, open_store
from memeval.summary import build_report
from tests.cli_here import run_cli_here
from tests.report.factory import HOSTILE, make_report


def test_a_run_writes_all_three_files(tmp_path, reference_run):
    paths = write_reports(reference_run, tmp_path / "out")
    assert set(paths) == {"md", "json", "html"}
    assert [p.name for p in paths.values()] == ["report.md", "report.json", "report.html"]
    assert all(p.stat().st_size > 1000 for p in paths.values())
    assert RunReport.model_validate_json(paths["json"].read_text()) == reference_run
    packs = [p.pack for c in reference_run.cases for p in c.probes]
    dumped = json.loads(paths["json"].read_text())
    assert [p["pack"] for c in dumped["cases"] for p in c["probes"]] == packs


def test_markdown_holds_every_table_the_issue_asks_for(reference_run):
    md = render(reference_run, run_intervals(reference_run, resamples=200))
    for heading in (
        "## Headline",
        "## Dimensions",
        "## Accuracy by scenario and phase",
        "## Scores by question style",
        "## Latency per step",
        "## Model and engine usage",
        "## KPIs",
        "## Misses",
    ):
        assert heading in md
    assert "| **all** | recall |" in md and "| **all** | synthesis |" in md
    assert "| **all** | all |" in md
    assert "| paraphrase | all |" in md and "| lexical | all |" in md
    assert "| step | call | n | p50 ms | p95 ms | p99 ms | max ms |" in md
    assert "| **composite** | 1.00 | 40 |" in md
    assert "**Composite 8" in md and "(95% CI " in md
    miss = next(p for c in reference_run.cases for p in c.probes if not p.hit)
    assert literal(miss.question) in md
    assert str(miss.expect) in md
    assert "```text\n# Context\n## Facts" in md  # the head of the pack, fenced


def test_markdown_shows_engine_text_as_code_never_as_markup(reference_run):
    md = render(reference_run, run_intervals(reference_run, resamples=50))
    assert HOSTILE in md
    inside_fence, prose = False, []
    for line in md.splitlines():
        if line.startswith("```"):
            inside_fence = not inside_fence
        elif not inside_fence:
            prose.append(re.sub(r"(`+).+?\1", "", line))  # drop code spans
    assert not any("<" in line for line in prose)


def test_intervals_bracket_the_point_estimates(reference_run):
    ci = run_intervals(reference_run, resamples=300)
    for name in ("composite", "temporal", "conflict", "multihop", "pack_hit"):
        interval = ci.intervals[name]
        assert interval.low is not None and interval.high is not None
        assert interval.low <= interval.value <= interval.high
        assert interval.high - interval.low > 0.01  # a few dozen cases are never certain
    assert ci.trials == {}
    assert ci == run_intervals(reference_run, resamples=300)  # seeded


def test_trials_report_their_spread():
    good = make_report(label="t", run_id="r")
    worse = make_report(label="t", run_id="r", rates={"temporal": 0.4}, hit=0.6)
    for case in worse.cases:
        case.trial = 1
    cases = good.cases + worse.cases
    report = build_report(
        run_id="r",
        label="t",
        engine="reference",
        suite="all",
        started_at=good.started_at,
        finished_at=None,
        cases=cases,
        planned=[f"{c.case_id}#{c.trial}" for c in cases],
    )
    ci = run_intervals(report, resamples=100)
    assert ci.trials["composite"].n == 2
    assert ci.trials["composite"].sd > 0
    assert ci.trials["pack_hit"].low < ci.trials["pack_hit"].high
    md = render(report, ci)
    assert "across trials ±" in md and "over 2 trials" in md


def test_out_dir_defaults_under_memeval_runs_with_a_safe_name(tmp_path, reference_run):
    assert default_out_dir("ref v2/../x").as_posix() == "memeval-runs/ref_v2_.._x"
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError):
        write_reports(reference_run, tmp_path / "file")


def test_report_command_reads_a_json_report(tmp_path, reference_run):
    path = tmp_path / "report.json"
    path.write_text(reference_run.model_dump_json())
    shown = run_cli_here("report", str(path), "--format", "md", "--resamples", "100")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("# memeval run `reference`")
    written = run_cli_here(
        "report", str(path), "--format", "html", "--out", str(tmp_path), "--resamples", "100"
    )
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "report.html").read_text().startswith("<!doctype html>")


def test_report_command_rebuilds_a_run_from_the_store(tmp_path, reference_run):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        store.create_run(
            run_id=reference_run.run_id,
            label=reference_run.label,
            engine=reference_run.engine,
            suite=reference_run.suite,
            planned=[
                PlannedCase(case_id=c.case_id, trial=c.trial, kind=c.kind, dimension=c.dimension)
                for c in reference_run.cases
            ],
        )
        for case in reference_run.cases:
            store.upsert_case_result(case)
    shown = run_cli_here("report", reference_run.run_id, "--format", "json", "--database-url", url)
    assert shown.returncode == 0, shown.stderr
    rebuilt = RunReport.model_validate_json(shown.stdout)
    assert rebuilt.cases == reference_run.cases
    assert rebuilt.composite == reference_run.composite
    assert rebuilt.missing == []
    unknown = run_cli_here("report", "no-such-run", "--database-url", url)
    assert unknown.returncode == 2
    assert "no run `no-such-run`" in unknown.stderr


def test_report_command_explains_a_missing_store(tmp_path):
    shown = run_cli_here(
        "report", "some-run", "--database-url", f"sqlite:///{tmp_path / 'none.db'}"
    )
    assert shown.returncode == 2
    assert "no results store" in shown.stderr
    assert not (tmp_path / "none.db").exists()
