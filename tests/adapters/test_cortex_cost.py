"""The engine cost KPI of a whole `memeval run` against CortexDB's wire: the union of the
cases' usage windows, read from `v1/admin/usage`, so parallel cases never bill twice."""

from __future__ import annotations

import json

import pytest

from memeval.results import RunReport


def test_a_run_reports_what_the_engine_billed_once(cli, cortex, cortex_url, tmp_path) -> None:
    out = tmp_path / "out"
    done = cli(
        "run",
        "--engine",
        "cortex",
        "--url",
        cortex_url,
        "--dimension",
        "temporal",
        "--workers",
        "2",
        "--out",
        str(out),
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = RunReport.model_validate_json((out / "report.json").read_text())
    assert all(c.engine_usage is not None for c in report.cases)
    cost = {k.name: k.value for k in report.kpis if k.group == "cost"}
    assert cortex.log.billed_events > 0
    # The fake bills 100 micro-USD per stored experience; every write fell inside some case.
    assert cost["engine_usd"] == pytest.approx(cortex.log.billed_events * 100 / 1e6)
    assert f"{cortex.log.billed_events} calls" in (out / "report.md").read_text()
    assert json.loads((out / "report.json").read_text())["cases"][0]["engine_usage"]["after"]
