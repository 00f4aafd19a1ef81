"""The JSON report is a versioned schema: what memeval writes names its version, a report of
the previous version (written by session 6's memeval, before the field existed) still loads,
and `memeval report --schema` prints the schema users validate against."""

from __future__ import annotations

import json
from pathlib import Path

from memeval.results import SCHEMA_VERSION, Better, KpiGroup, RunReport
from tests.conftest import run_cli

V1 = Path(__file__).resolve().parents[1] / "data" / "report_v1.json"


def test_a_report_of_the_previous_version_still_loads() -> None:
    raw = json.loads(V1.read_text())
    assert "schema_version" not in raw and any(k["name"] == "planted_flagged" for k in raw["kpis"])
    report = RunReport.model_validate(raw)
    assert report.schema_version == 1
    assert report.composite is not None and len(report.cases) == 10
    names = {k.name for k in report.kpis}
    assert "conflict_pack_hit" in names and "planted_flagged" not in names  # read under today's
    assert {k.group for k in report.kpis} <= set(KpiGroup)
    assert {k.better for k in report.kpis} <= set(Better)


def test_what_memeval_writes_names_the_current_version(tmp_path: Path) -> None:
    done = run_cli(
        "run", "--in-process", "--engine", "naive", "--dimension", "temporal",
        "--json", str(tmp_path / "r.json"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 3), done.stderr
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["schema_version"] == SCHEMA_VERSION == 2
    assert RunReport.model_validate(written).kpis[0].group in set(KpiGroup)


def test_report_schema_prints_the_json_schema() -> None:
    done = run_cli("report", "--schema")
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    assert schema["title"] == "RunReport"
    assert "schema_version" in schema["properties"]
    assert set(schema["$defs"]["KpiGroup"]["enum"]) == {g.value for g in KpiGroup}
    missing = run_cli("report")
    assert missing.returncode == 2 and "name the run" in missing.stderr
    assert "Traceback" not in missing.stderr
