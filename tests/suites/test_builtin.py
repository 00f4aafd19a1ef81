"""The shipped suites load, and hold what the catalogue promises."""

from __future__ import annotations

import json

from memeval.suites.catalog import count, resolve, stream
from memeval.suites.fixture import Dimension
from memeval.suites.scenario import Via
from tests.cli_here import run_cli_here


def test_lifecycle_counts_meet_the_catalogue():
    counts = count(stream("lifecycle"))
    assert counts.scenarios == 14  # the catalogue's 12, a coding session and task drift
    assert counts.probes_scored >= 52
    assert counts.paraphrase >= 20
    assert counts.lexical >= 32
    assert counts.stale >= 7
    assert counts.leak_checks >= 3


def test_every_dimension_has_ten_fixtures():
    counts = count(stream("dimensions"))
    assert counts.fixtures_per_dimension == {d.value: 10 for d in Dimension}


def test_every_via_is_exercised():
    vias = {p.via for s in resolve("lifecycle").scenarios for p in s.probes}
    assert vias == set(Via)


def test_suites_list_json():
    done = run_cli_here("suites", "list", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["scenarios"] == 16  # the lifecycle suite's 14, and the safety suite's 2
    assert data["probes_scored"] >= 52
    assert data["paraphrase"] >= 20
    assert set(data["fixtures_per_dimension"].values()) == {10}


def test_validate_accepts_every_shipped_file():
    done = run_cli_here("suites", "validate", "fixtures")
    assert done.returncode == 0, done.stderr
    assert "67 cases" in done.stdout  # all, and the opt-in loop guard


def test_schema_is_json_schema():
    done = run_cli_here("suites", "schema")
    assert done.returncode == 0
    schema = json.loads(done.stdout)
    assert "scenario" in json.dumps(schema) and "fixture" in json.dumps(schema)


def test_installed_package_ships_the_suites(cli, tmp_path):
    """From a folder with no checkout in sight, the installed package still finds its suites."""
    done = cli("suites", "list", "--json", cwd=tmp_path, env={"PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["fixtures"] == 50


def test_the_safety_suite_audits_erasure_and_is_part_of_all():
    safety = resolve("safety").scenarios
    assert len(safety) == 2 and all(s.erase is not None for s in safety)
    assert any(s.erase.by_id for s in safety if s.erase is not None)
    every = {c.case.id for c in resolve("all").cases}
    assert {s.id for s in safety} <= every
