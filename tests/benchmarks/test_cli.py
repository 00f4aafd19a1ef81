"""The benchmark commands as a user runs them: import to files, run a benchmark spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval.errors import UsageError
from memeval.importers import sources
from tests.benchmarks.samples import LOCOMO, LONGMEMEVAL, write
from tests.conftest import run_cli


def test_import_writes_cases_that_validate(tmp_path: Path):
    source = write(tmp_path, "sample.json", LOCOMO)
    out = tmp_path / "cases"
    done = run_cli("suites", "import", "locomo", str(source), "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "sha256" in done.stderr and "warning" in done.stderr  # not a pinned release
    assert [p.name for p in out.iterdir()] == ["locomo-conv-x1.yaml"]
    checked = run_cli("suites", "validate", str(out), cwd=tmp_path)
    assert checked.returncode == 0 and "1 case in 1 file" in checked.stdout


def test_an_unknown_benchmark_exits_2_with_one_message(tmp_path: Path):
    done = run_cli("suites", "import", "locomoo", "x.json", "--out", "o", cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown benchmark `locomoo`" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [("longmemeval:", "names no file"), ("locomo:/nonexistent/l.json", "does not exist")],
)
def test_a_bad_spec_is_a_usage_error(spec: str, fragment: str):
    with pytest.raises(UsageError) as caught:
        sources.parse(spec)
    assert fragment in caught.value.message and caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("benchmark", "data", "engine"),
    [("locomo", LOCOMO, "bm25"), ("longmemeval", LONGMEMEVAL, "reference")],
)
def test_a_benchmark_runs_and_reports_evidence(tmp_path: Path, benchmark, data, engine):
    source = write(tmp_path, "sample.json", data)
    report = tmp_path / "report.json"
    done = run_cli(
        "run",
        "--in-process",
        "--suite",
        f"{benchmark}:{source}",
        "--engine",
        engine,
        "--json",
        str(report),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    kpis = {k["name"]: k for k in json.loads(report.read_text())["kpis"]}
    assert kpis["evidence_recall"]["group"] == "accuracy"
    assert kpis["evidence_recall"]["n"] > 0 and "evidence_mrr" in kpis
    probes = [p for c in json.loads(report.read_text())["cases"] for p in c["probes"]]
    assert all(any(t.startswith("category:") for t in p["tags"]) for p in probes)
