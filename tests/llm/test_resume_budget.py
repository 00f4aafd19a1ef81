"""A resumed run keeps to the budget its first session already spent from.

The embedded farm's Redis dies with each `memeval run`, so a resume reopens the budget in a
fresh one: the spend must come back from the stored results, or the cap would be spent twice.
"""

from __future__ import annotations

from tests.llm.test_run_llm import run
from tests.llm.test_sweep import sweep

CAP_MICROS = 1500


def test_a_resume_after_the_budget_bound_spends_nothing_beyond_the_cap(cli, server, tmp_path):
    first, report = run(cli, server, tmp_path, "--budget-usd", str(CAP_MICROS / 1e6))
    assert report is not None, first.stdout + first.stderr
    skipped = [c for c in report.cases if c.status.value == "skipped_budget"]
    assert skipped, "the cap never bound, so this test shows nothing"
    billed_before = server.billed_micros
    assert 0 < billed_before <= CAP_MICROS

    again = cli(
        "run",
        "--resume",
        report.run_id,
        "--out",
        str(tmp_path / "resumed"),
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}"},
    )
    assert "Traceback" not in again.stderr, again.stderr
    assert f"${billed_before / 1e6:.4f} spent so far" in again.stdout, again.stdout
    assert server.billed_micros <= CAP_MICROS


def test_resuming_one_run_of_a_sweep_reopens_the_sweeps_budget(cli, server, tmp_path):
    """A sweep's runs reserve against the sweep's budget, which a fresh embedded Redis has
    never seen: the resume reopens it with what every run of the sweep already paid."""
    _, report = sweep(cli, server, tmp_path, "--budget-usd", "0.02", "--suite", "dimensions",
                      "--workers", "2")  # fmt: skip
    assert report.budget_closed == "exhausted"
    billed_before = server.billed_micros
    first = report.runs[0].variant.run_id

    again = cli(
        "run",
        "--resume",
        first,
        "--out",
        str(tmp_path / "resumed"),
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}"},
    )
    assert "Traceback" not in again.stderr, again.stderr
    assert "never opened" not in again.stdout + again.stderr
    assert f"${billed_before / 1e6:.4f} spent so far" in again.stdout, again.stdout
    assert server.billed_micros <= 20_000
