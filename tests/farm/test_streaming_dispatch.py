"""A run sends its cases as they are read from the suite, a window at a time, each few as a
chord; a slice (`--limit`) plans only a file's first cases; a resume reads the cases it lacks
from the file again; an in-process run reads a case only when a slot is free."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console

from benchmarks.longmemeval_gen import write
from memeval.evaluation.planning import RunPlan, RunRequest, new_run_id, plan_new
from memeval.evaluation.store import usable_store
from memeval.importers import sources
from memeval.inprocess import run_plan
from memeval.results import CaseResult
from memeval.runner import RunOptions
from memeval.store import RunStatus
from memeval.suites.catalog import resolve
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario
from tests.conftest import run_cli


def test_a_resumed_slice_is_read_from_the_file_and_sent_in_several_chords(
    tmp_path: Path,
) -> None:
    path = tmp_path / "lme.json"
    write(path, instances=9, sessions=3, turns=2, words=8, seed=5)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store = usable_store(url)
    suite = f"longmemeval:{path}"
    planned = plan_new(store, RunRequest(suite=suite, limit=5), Console(file=io.StringIO()))
    first_five = [case.id for case in sources.load("longmemeval", path)][:5]
    assert [key.case_id for key in planned.todo] == first_five
    assert store.get_run(planned.run_id).subset == "first 5 cases only"  # type: ignore[union-attr]
    # The run exists and nothing was sent (a dispatcher killed at once): the resume reads the
    # five cases from the file again, two in flight at a time, a chord each.
    done = run_cli(
        "run", "--resume", planned.run_id, "--workers", "2", "--json", str(tmp_path / "r.json"),
        cwd=tmp_path, env={"MEMEVAL_DATABASE_URL": url, "MEMEVAL_DISPATCH_WINDOW": "2"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert sorted(c["case_id"] for c in report["cases"]) == sorted(first_five)
    assert all(c["status"] == "done" for c in report["cases"]) and not report["missing"]
    record = store.get_run(planned.run_id)
    assert record is not None and record.status is RunStatus.finished
    store.dispose()


def test_an_in_process_run_reads_a_case_only_when_a_slot_is_free() -> None:
    cases = [located.case for located in resolve("lifecycle").cases][:8]
    read, landed, most = 0, 0, 0

    def reading() -> Iterator[tuple[Scenario | Fixture, int]]:
        nonlocal read, most
        for case in cases:
            read += 1
            most = max(most, read - landed)
            yield case, 0

    def count(_: CaseResult) -> None:
        nonlocal landed
        landed += 1

    plan = RunPlan(
        run_id=new_run_id(), label="l", engine="reference", suite="", options=RunOptions()
    )
    results = asyncio.run(run_plan(plan, reading(), concurrency=2, on_result=count))
    assert len(results) == len(cases) == landed
    assert most <= 3, f"{most} cases held at once with 2 slots"  # two running, one waiting
