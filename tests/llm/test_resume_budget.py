"""A resumed run keeps to the budget its first session already spent from.

The embedded farm's Redis dies with each `memeval run`, so a resume reopens the budget in a
fresh one: the spend must come back from the stored results, or the cap would be spent twice.
Resuming one run of a sweep is checked in `test_sweep`, on the budget-bound sweep it runs anyway.
"""

from __future__ import annotations

from tests.llm.test_run_llm import run

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
