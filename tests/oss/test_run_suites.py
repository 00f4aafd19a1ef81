"""`memeval run --engine mem0-oss` and `--engine graphiti` on the embedded farm, against a
`memeval models serve` this test starts: exit 0, every planned case done, none errored.

Each engine runs the first fixture of every dimension and a few lifecycle scenarios that drive
different engine calls: enough to prove the wiring. A whole-suite run of a real engine is a
benchmark (graphiti makes about twenty model calls per write, so its suite takes minutes on a
shared two-core machine): `python -m benchmarks.oss_engines` runs the full suite on both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memeval.suites.catalog import resolve
from memeval.suites.fixture import Dimension
from tests.model_service import model_service
from tests.oss.engines import COGNEE, LETTA

ROOT = Path(__file__).resolve().parents[2]
# Documents and turns written, then asked and resumed from (ingest, post_turn, pre_turn,
# start_session).
GRAPHITI_SCENARIOS = ("lifecycle/conflicts",)
# The same, then recall for compaction and a compiled context document.
MEM0_OSS_SCENARIOS = (
    "lifecycle/conflicts",
    "lifecycle/compaction",
    "lifecycle/learning_from_feedback",
)
# The temporal dimension whole, and a scenario that writes, settles, probes and forgets.
NEXT_SCENARIOS = ("lifecycle/conflicts",)
FARM_ENV = ("MEMEVAL_BROKER_URL", "MEMEVAL_DATABASE_URL", "MEMEVAL_RESULT_BACKEND")


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """`memeval models serve --port 0`, as a user starts it; its first line holds the URL."""
    with model_service() as (url, _):
        yield url


def _run(engine: str, env_var: str, url: str, folder: Path, *selection: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in FARM_ENV}
    env[env_var] = url
    done = subprocess.run(
        [sys.executable, "-m", "memeval", "run", "--engine", engine, "--workers", "2",
         "--label", engine, "--out", str(folder / "out"), "--json", str(folder / "r.json"),
         *selection],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    return json.loads((folder / "r.json").read_text())


def _assert_all_done(report: dict, planned: set[str]) -> None:
    cases = report["cases"]
    assert {c["case_id"] for c in cases} == planned
    errored = {c["case_id"]: c["error"] for c in cases if c["status"] != "done" or c["error"]}
    assert errored == {}
    scenarios = [c for c in cases if c["kind"] == "scenario"]
    assert scenarios and all(c["probes"] for c in scenarios)  # settled, then probed


def _selection(scenario_ids: tuple[str, ...]) -> list[str]:
    """The first fixture of every dimension and the named scenarios, as case ids."""
    first: dict[Dimension, str] = {}
    for fixture in resolve("dimensions").fixtures:
        first.setdefault(fixture.dimension, fixture.id)
    assert first.keys() == set(Dimension)
    scenarios = [s.id for s in resolve("lifecycle").scenarios if s.id in scenario_ids]
    assert len(scenarios) == len(scenario_ids)
    return [*first.values(), *scenarios]


def _run_selection(
    engine: str, env_var: str, url: str, folder: Path, scenarios: tuple[str, ...]
) -> None:
    only = _selection(scenarios)
    report = _run(engine, env_var, url, folder, *[x for i in only for x in ("--only", i)])
    _assert_all_done(report, set(only))


@pytest.mark.timeout(900)
def test_mem0_oss_runs_a_fixture_of_every_dimension_and_three_scenarios(served, tmp_path):
    _run_selection("mem0-oss", "MEM0_OSS_URL", served, tmp_path, MEM0_OSS_SCENARIOS)


@pytest.mark.timeout(900)
def test_graphiti_runs_a_fixture_of_every_dimension_and_one_scenario(served, tmp_path):
    _run_selection("graphiti", "GRAPHITI_URL", served, tmp_path, GRAPHITI_SCENARIOS)


@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    ("engine", "env_var"),
    [
        ("langmem", "LANGMEM_URL"),
        pytest.param("cognee", "COGNEE_ENGINE_URL", marks=COGNEE.marks),
        pytest.param("letta", "LETTA_ENGINE_URL", marks=LETTA.marks),
    ],
)
def test_runs_the_temporal_dimension_and_one_scenario(engine, env_var, served, tmp_path):
    temporal = [f.id for f in resolve("dimensions").fixtures if f.dimension is Dimension.temporal]
    only = [*temporal, *NEXT_SCENARIOS]
    report = _run(engine, env_var, served, tmp_path, *[x for i in only for x in ("--only", i)])
    _assert_all_done(report, set(only))
