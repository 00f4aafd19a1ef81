"""Sweeps: the interleaving as a pure function, and whole sweeps on the embedded farm (a private
Redis and a local worker node, as `memeval run` uses) against a local OpenAI-compatible server,
one of them cut short by its budget."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memeval.errors import UsageError
from memeval.evaluation.columns import Column, ColumnPlan, Interleaved
from memeval.evaluation.planning import select
from memeval.evaluation.selection import Selection
from memeval.llm.estimate import planned_calls
from memeval.llm.sweep import Profile, SweepReport, parse_profile, read_cases
from memeval.report.scorecard import scorecard
from memeval.results import CaseStatus
from memeval.runner import RunOptions
from memeval.store import PlannedCase
from memeval.suites.catalog import resolve
from tests.cli_here import run_cli_here

MODELS = ["test/cheap", "test/dear"]


def _interleaved(cases: int, models: int, trials: int = 1) -> Interleaved:
    once = [PlannedCase(case_id=f"c{c}", kind="scenario") for c in range(cases)]
    plan = ColumnPlan(selection=Selection(suite="lifecycle"), once=once)
    columns = [
        Column(run_id=f"m{m}", label=f"m{m}", engine="reference", options=RunOptions())
        for m in range(models)
    ]
    return Interleaved(plan=plan, trials=trials, columns=columns)


@given(cases=st.integers(1, 30), models=st.integers(1, 5), data=st.data())
def test_any_prefix_covers_every_variant_equally(cases, models, data):
    jobs = _interleaved(cases, models).outgoing().keys
    assert len(jobs) == cases * models
    cut = data.draw(st.integers(0, len(jobs)))
    done = {f"m{m}": [k.case_id for v, k in jobs[:cut] if v == f"m{m}"] for m in range(models)}
    sizes = [len(v) for v in done.values()]
    assert max(sizes) - min(sizes) <= 1
    common = set.intersection(*(set(v) for v in done.values()))
    assert common == {f"c{i}" for i in range(cut // models)}


def test_interleave_is_case_major_trial_by_trial():
    keys = _interleaved(2, 2, trials=2).outgoing().keys
    assert [(run, key.case_id, key.trial) for run, key in keys] == [
        (run, case, trial) for trial in (0, 1) for case in ("c0", "c1") for run in ("m0", "m1")
    ]


def test_a_sweep_sends_the_bodies_in_the_order_of_its_keys():
    selection = Selection(suite="dimensions", only=["cfo_on_date", "never_stored_parking"])
    cases = read_cases(selection)
    runs = Interleaved(plan=cases.plan, trials=2, columns=_interleaved(1, 3).columns)
    outgoing = runs.outgoing()
    assert [job.key for job in outgoing.jobs] == outgoing.keys
    assert len(outgoing.keys) == 2 * 2 * 3 and list(outgoing.engines) == ["m0", "m1", "m2"]
    assert [p.case_id for p in cases.plan.once] == [c.id for c in selection.cases()]
    assert cases.calls == planned_calls(selection.cases()) != []


def test_profiles():
    profile = parse_profile("small: --engine words --k 3", "reference")
    assert profile == Profile(name="small", engine="words", k=3)
    assert parse_profile("plain:", "reference").engine == "reference"
    for bad in ("no-colon", "x: --model m", "x: --k", "x: --k zero", "bad name!: --k 3"):
        with pytest.raises(UsageError):
            parse_profile(bad, "reference")


def test_sweep_command_refuses_a_zero_or_negative_budget():
    for value in ("0", "-2"):
        result = run_cli_here("sweep", "--models", "a/b", "--budget-usd", value)
        assert result.returncode == 2, result.stderr
        assert "--budget-usd must be positive" in result.stderr
        assert "Traceback" not in result.stderr
    bad_rate = run_cli_here("sweep", "--models", "a/b", "--budget-usd", "1", "--rate", "model=5/d")
    assert bad_rate.returncode == 2 and "unknown unit" in bad_rate.stderr


def test_sweep_dry_run_prints_the_estimate_and_runs_nothing(server, tmp_path):
    db = tmp_path / "runs.db"
    result = run_cli_here("sweep", "--models", ",".join(MODELS), "--budget-usd", "1", "--suite",
                          "lifecycle", "--base-url", server.base_url, "--dry-run",
                          env={"MEMEVAL_DATABASE_URL": f"sqlite:///{db}"})  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "test/dear" in result.stdout and not server.calls and not db.exists()


def sweep(
    cli, server, tmp_path: Path, *extra: str
) -> tuple[subprocess.CompletedProcess[str], SweepReport]:
    """`memeval sweep` as a user runs it, on the embedded farm, with a private store."""
    out = tmp_path / "sweep.json"
    done = cli(
        "sweep",
        "--models",
        ",".join(MODELS),
        "--base-url",
        server.base_url,
        "--json",
        str(out),
        *extra,
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}", "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done, SweepReport.model_validate_json(out.read_text())


def rows(tmp_path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(tmp_path / "runs.db") as connection:
        return connection.execute(sql).fetchall()


def test_a_sweep_of_two_models_is_two_runs_dispatched_interleaved(cli, server, tmp_path):
    cases = select(resolve("lifecycle"), [], [])
    _, report = sweep(cli, server, tmp_path, "--budget-usd", "50", "--suite", "lifecycle",
                      "--workers", "1")  # fmt: skip
    sid = report.sweep_id
    assert sorted(rows(tmp_path, "select id, label, status from runs")) == [
        (f"{sid}.0", f"{sid}/test/cheap", "finished"),
        (f"{sid}.1", f"{sid}/test/dear", "finished"),
    ]
    assert report.budget_closed is None and report.skipped_budget == 0 and report.errors == 0
    assert report.done == report.planned == 2 * len(cases)
    assert report.coverage == 1.0 and report.common == sorted(c.id for c in cases)
    # One worker takes the queue in order: case 1 for every model, then case 2, and so on.
    landed = sorted(
        (c.started_at, c.case_id, run.variant.model)
        for run in report.runs
        for c in run.report.cases
    )
    assert [(case, model) for _, case, model in landed] == [
        (c.id, m) for c in cases for m in MODELS
    ]
    # `memeval estimate` counts exactly the calls a sweep makes, and the store what was billed.
    assert len(server.calls) == len(planned_calls(cases)) * len(MODELS)
    assert round(report.spent_usd * 1e6) == server.billed_micros
    assert all(run.answers > 0 and run.model_answer is not None for run in report.runs)
    assert report.comparison is not None
    assert [g.name for g in report.comparison.groups] == MODELS


def test_a_sweep_cut_short_by_its_budget_still_reports_and_a_resume_reopens_it(
    cli, server, tmp_path
):
    """Also: a sweep's runs reserve against the sweep's budget, which a fresh embedded Redis
    has never seen, so resuming one of them reopens it with what every run already paid."""
    cases = select(resolve("dimensions"), [], [])
    done, report = sweep(cli, server, tmp_path, "--budget-usd", "0.02", "--suite", "dimensions",
                         "--workers", "2")  # fmt: skip
    assert SweepReport.model_validate_json(report.model_dump_json()) == report
    assert "expected $" in done.stdout and "skipped_budget" in done.stdout

    assert report.budget_closed == "exhausted"
    assert report.skipped_budget > 0 and report.done > 0
    assert report.spent_usd <= report.budget_usd
    assert round(report.spent_usd * 1e6) == server.billed_micros
    assert report.planned == len(cases) * len(MODELS)
    assert report.done + report.skipped_budget + report.errors == report.planned
    assert rows(tmp_path, "select status from runs") == [("finished",), ("finished",)]

    order = {c.id: i for i, c in enumerate(cases)}
    done_sets = []
    for run in report.runs:
        assert run.report.missing == []  # every planned case has a result
        assert len(run.report.cases) == len(cases)
        finished = {c.case_id for c in run.report.cases if c.status is CaseStatus.done}
        skipped = [order[c.case_id] for c in run.report.cases if c.status is not CaseStatus.done]
        # Interleaved dispatch: what was done comes before what was skipped, give or take the
        # cases in flight when the money ran out.
        assert max(order[c] for c in finished) - min(skipped) <= 2
        done_sets.append(finished)
    assert len(done_sets[0] ^ done_sets[1]) <= 4, "one model answered cases the other did not"
    assert 0 < len(report.common) < len(cases)
    assert report.common == sorted(set.intersection(*done_sets))
    assert report.coverage == round(len(report.common) / len(cases), 4)

    billed_before = server.billed_micros
    again = cli(
        "run",
        "--resume",
        report.runs[0].variant.run_id,
        "--out",
        str(tmp_path / "resumed"),
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}"},
    )
    assert "Traceback" not in again.stderr, again.stderr
    assert "never opened" not in again.stdout + again.stderr
    assert f"${billed_before / 1e6:.4f} spent so far" in again.stdout, again.stdout
    assert server.billed_micros <= 20_000


def test_the_comparison_is_on_the_common_subset(cli, server, tmp_path):
    cases = select(resolve("dimensions"), [], [])
    done, report = sweep(cli, server, tmp_path, "--budget-usd", "0.02", "--suite", "dimensions",
                         "--workers", "2", "--profile", "naive: --engine naive",
                         "--profile", "ref3: --engine reference --k 3")  # fmt: skip
    variants = ["naive/test/cheap", "naive/test/dear", "ref3/test/cheap", "ref3/test/dear"]
    assert [r.variant.name for r in report.runs] == variants
    assert len(rows(tmp_path, "select id from runs")) == 4
    comparison = report.comparison
    assert comparison is not None and comparison.baseline == variants[0]
    assert [(c.baseline, c.candidate) for c in comparison.comparisons] == [
        (variants[0], v) for v in variants[1:]
    ]
    common = set(comparison.common)
    assert comparison.common == report.common and 0 < len(common) < len(cases)
    for run in report.runs:
        finished = {c.case_id for c in run.report.cases if c.status is CaseStatus.done}
        assert common <= finished
        on_common = [c for c in run.report.cases if c.case_id in common]
        assert comparison.table[run.variant.name] == scorecard(on_common)
        group = next(g for g in comparison.groups if g.name == run.variant.name)
        assert group.results == len(common)
        assert group.outside == len(cases) - len(common)
        assert run.answers == sum(
            q.model_ok is not None for c in on_common for q in c.queries
        )  # fixtures: the model answers queries
    # The profiles differ on the engine, which the verdicts see beyond noise.
    assert comparison.comparisons[1].verdict == "clear improvement"
    for text in ("cases in common", "ref3/test/cheap vs naive/test/cheap", "skipped_budget"):
        assert text in done.stdout
