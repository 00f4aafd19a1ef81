"""KPIs an engine cannot produce (issue 29, item 9): n/a for engines without the capability,
never a verdict in `compare`; `conflict_pack_hit` is pack hit on conflict probes, and reports
stored under its old name, `planted_flagged`, still load.

Real runs of the real engines, in process, over the built-in suites; the CLI is the entry point
`python -m memeval` calls (`tests.cli_here`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval.report.compare import Verdict, compare
from memeval.results import RunReport
from tests.cli_here import run_cli_here

TEMPORAL = ("cfo_on_date", "card_limit_after_changes", "break_glass_access_expired")
ARGS = ("--only", "lifecycle/conflicts", *(f"--only=dimensions/temporal/{n}" for n in TEMPORAL))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """A reference and a naive run of the same cases: their report and terminal output."""
    folder = tmp_path_factory.mktemp("capabilities")
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{folder / 'memeval.db'}", "COLUMNS": "120"}
    out = {}
    for engine in ("reference", "naive"):
        report = folder / f"{engine}.json"
        done = run_cli_here(
            "run", "--in-process", "--engine", engine, "--label", engine, *ARGS,
            "--json", str(report), "--out", str(folder / engine), cwd=folder, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        out[engine] = (report, done.stdout)
    return out


def _kpis(path: Path) -> dict[str, dict]:
    return {k["name"]: k for k in json.loads(path.read_text())["kpis"] if k["tag"] is None}


def test_an_engine_without_conflicts_has_no_spurious_rate(runs):
    naive, printed = runs["naive"]
    assert _kpis(naive)["spurious"]["value"] is None
    assert _kpis(naive)["beliefs_built"]["value"] is None
    (line,) = [line for line in printed.splitlines() if " spurious " in line]
    assert "n/a" in line and "%" not in line
    reference, _ = runs["reference"]
    assert _kpis(reference)["spurious"]["value"] is not None


def test_compare_never_judges_a_kpi_one_side_cannot_produce(runs):
    reports = [RunReport.model_validate_json(runs[e][0].read_text()) for e in runs]
    (comparison,) = compare(reports, baseline="reference", resamples=200).comparisons
    moves = {m.name: m for m in comparison.moves}
    assert moves["spurious"].verdict is Verdict.unmeasured
    assert "spurious" not in comparison.headline
    assert moves["conflict_pack_hit"].base is not None


def test_the_conflict_pack_hit_kpi_and_its_old_name(runs):
    reference, _ = runs["reference"]
    assert "conflict_pack_hit" in _kpis(reference)
    old = reference.read_text().replace('"conflict_pack_hit"', '"planted_flagged"')
    assert '"planted_flagged"' in old
    loaded = RunReport.model_validate_json(old)
    assert "conflict_pack_hit" in {k.name for k in loaded.kpis}
    assert "planted_flagged" not in {k.name for k in loaded.kpis}
