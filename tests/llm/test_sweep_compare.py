"""`memeval compare SWEEP_ID`: a sweep id stands for all of its runs."""

from __future__ import annotations

from tests.cli_here import run_cli_here
from tests.llm.test_sweep import MODELS, sweep


def test_compare_expands_a_sweep_id_to_its_runs(cli, server, tmp_path):
    _, report = sweep(cli, server, tmp_path, "--budget-usd", "50", "--suite", "lifecycle",
                      "--only", "lifecycle/contradictions", "--workers", "1")  # fmt: skip
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}", "COLUMNS": "200"}
    compared = run_cli_here("compare", report.sweep_id, env=env)
    assert compared.returncode == 0, compared.stdout + compared.stderr
    for model in MODELS:
        assert f"{report.sweep_id}/{model}" in compared.stdout

    unknown = run_cli_here("compare", "no-such-sweep", env=env)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert "no-such-sweep" in unknown.stderr
