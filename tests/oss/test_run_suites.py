"""`memeval run --engine mem0-oss` and `--engine graphiti` on the embedded farm, against a
`memeval models serve` this test starts: exit 0, every planned case done, none errored.

mem0-oss runs the whole built-in suite. graphiti makes about twenty model calls per write, so
on a shared two-core machine its whole suite takes minutes; the test runs every dimension
fixture and three lifecycle scenarios (`benchmarks/oss_engines.py` runs it all)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memeval.suites.catalog import resolve

ROOT = Path(__file__).resolve().parents[2]
GRAPHITI_SCENARIOS = ("lifecycle/isolation", "lifecycle/compaction", "lifecycle/conflicts")
FARM_ENV = ("MEMEVAL_BROKER_URL", "MEMEVAL_DATABASE_URL", "MEMEVAL_RESULT_BACKEND")


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """`memeval models serve --port 0`, as a user starts it; its first line holds the URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memeval", "models", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        match = re.search(r"http://127\.0\.0\.1:\d+/v1", line)
        assert match, f"no URL in {line!r}"
        yield match.group(0)
    finally:
        proc.terminate()
        proc.wait(10)


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


@pytest.mark.timeout(900)
def test_mem0_oss_runs_the_whole_builtin_suite(served, tmp_path):
    report = _run("mem0-oss", "MEM0_OSS_URL", served, tmp_path)
    _assert_all_done(report, {c.case.id for c in resolve("all").cases})


@pytest.mark.timeout(900)
def test_graphiti_runs_every_fixture_and_three_scenarios(served, tmp_path):
    scenarios = [s for s in resolve("lifecycle").scenarios if s.id in GRAPHITI_SCENARIOS]
    fixtures = resolve("dimensions").fixtures
    only = [f.id for f in (*scenarios, *fixtures)]
    assert len(scenarios) == len(GRAPHITI_SCENARIOS)
    report = _run(
        "graphiti", "GRAPHITI_URL", served, tmp_path, *[x for i in only for x in ("--only", i)]
    )
    _assert_all_done(report, set(only))
