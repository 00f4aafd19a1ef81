"""`memeval.evaluate`, `memeval.load_run` and `memeval.compare`: the built-in suite in this
process and on the embedded farm (real Redis and Celery workers, started by the API in a
subprocess, as a user's script would), runs found again by id and label, and bad input."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import memeval
from memeval.engines.naive import NaiveEngine
from memeval.engines.types import Assertion
from memeval.errors import UsageError
from memeval.report.compare import GroupBy, Verdict
from memeval.results import RunReport
from memeval.suites.catalog import resolve

ROOT = Path(__file__).resolve().parents[2]
SUITE = "dimensions"


class CountingEngine(NaiveEngine):
    """The naive engine, counting what it is asked to store and whether it was closed."""

    def __init__(self) -> None:
        super().__init__()
        self.stored = 0
        self.closed = False

    async def store(self, tenant: str, assertion: Assertion) -> None:
        self.stored += 1
        await super().store(tenant, assertion)

    async def close(self) -> None:
        self.closed = True


def on_embedded_farm(database_url: str, label: str) -> RunReport:
    """`memeval.evaluate(farm="embedded")` in its own process: the farm's Celery client stays
    out of the test process, whose later forks a live kombu connection can hang."""
    script = textwrap.dedent(f"""
        import memeval
        report = memeval.evaluate("reference", suites={SUITE!r}, farm="embedded", workers=2,
                                  label={label!r}, database_url={database_url!r})
        print(report.model_dump_json())
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEVAL_")}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return RunReport.model_validate_json(done.stdout.strip().splitlines()[-1])


def scores(report: RunReport) -> dict[tuple[str, int], tuple]:
    return {
        (c.case_id, c.trial): (c.status, c.score, [(ch.query, ch.status) for ch in c.checks])
        for c in report.cases
    }


def accuracy(report: RunReport) -> dict[str, float | None]:
    """The KPIs that measure answers, not the clock."""
    return {k.name: k.value for k in report.overall_kpis if k.group != "latency"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('api') / 'memeval.db'}"


@pytest.fixture(scope="module")
def runs(store: str) -> dict[str, RunReport]:
    here = memeval.evaluate("reference", suites=SUITE, label="here", database_url=store)
    farm = on_embedded_farm(store, "farm")
    return {"here": here, "farm": farm}


def test_in_process_and_on_the_embedded_farm_score_alike(runs: dict[str, RunReport]) -> None:
    here, farm = runs["here"], runs["farm"]
    assert len(here.cases) > 10 and not here.missing
    assert all(c.status.value == "done" for c in here.cases + farm.cases)
    assert here.composite is not None and here.composite > 0.5
    assert farm.composite == here.composite
    assert farm.dimensions == here.dimensions
    assert accuracy(farm) == accuracy(here) and "pack_hit" in accuracy(here)
    assert scores(farm) == scores(here)
    assert (here.engine, farm.engine) == ("reference", "reference")


def test_load_run_by_id_and_by_label(runs: dict[str, RunReport], store: str) -> None:
    farm = runs["farm"]
    by_id = memeval.load_run(farm.run_id, database_url=store)
    by_label = memeval.load_run("farm", database_url=store)
    assert by_id.run_id == by_label.run_id == farm.run_id
    assert by_label.label == "farm" and by_label.composite == farm.composite
    assert scores(by_label) == scores(farm)
    with pytest.raises(UsageError, match="no run `nope`"):
        memeval.load_run("nope", database_url=store)


def test_compare_two_runs(runs: dict[str, RunReport], store: str) -> None:
    same = memeval.compare(runs["here"], "farm", database_url=store)
    (pair,) = same.comparisons
    assert (same.by, pair.baseline, pair.candidate) == (GroupBy.label, "here", "farm")
    assert pair.verdict == Verdict.noise.value  # equal scores: nothing moved

    naive = memeval.evaluate("naive", suites=SUITE, label="naive", database_url=store)
    (worse,) = memeval.compare(runs["here"].run_id, naive, database_url=store).comparisons
    assert worse.candidate == "naive" and worse.verdict == "clear regression"


def test_an_engine_instance_runs_in_this_process(store: str, tmp_path: Path) -> None:
    engine = CountingEngine()
    report = memeval.evaluate(
        engine, suites=SUITE, only="cfo_on_date", database_url=store, out=tmp_path / "reports"
    )
    assert [c.case_id for c in report.cases] == ["dimensions/temporal/cfo_on_date"]
    assert report.engine == "tests.api.test_api:CountingEngine"
    assert engine.stored > 0 and engine.closed
    written = memeval.load_run(str(tmp_path / "reports"))  # the folder holding report.json
    assert (written.run_id, written.composite) == (report.run_id, report.composite)
    assert (tmp_path / "reports" / "report.html").is_file()


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"engine": "nope"}, "unknown engine `nope`"),
        ({"engine": object()}, "engine: <object"),
        ({"trials": 0}, "trials: input should be greater than or equal to 1, not 0"),
        ({"trials": -2}, "trials: input should be greater than or equal to 1, not -2"),
        ({"budget_usd": -1.0, "llm": True}, "budget_usd: input should be greater than 0"),
        ({"budget_usd": 5.0}, "budget_usd only applies when a model answers"),
        ({"workers": 0}, "workers: input should be greater than or equal to 1"),
        ({"farm": "nowhere"}, "farm `nowhere` is neither `embedded` nor a broker URL"),
        ({"out": __file__}, f"out {__file__} is a file"),
        ({"suites": "no-such-suite"}, "no-such-suite"),
        ({"dimension": "colour"}, "unknown dimension `colour`"),
        ({"limit": 0}, "--limit must be at least 1, not 0"),
    ],
)
def test_bad_input_is_a_usage_error_naming_the_argument(
    given: dict[str, object], named: str, store: str
) -> None:
    args: dict[str, object] = {"engine": "reference", "suites": SUITE, **given}
    with pytest.raises(UsageError) as raised:
        memeval.evaluate(database_url=store, **args)  # type: ignore[arg-type]
    assert named in raised.value.message and raised.value.fix


def test_a_limit_runs_the_selections_first_cases_and_names_them(store: str) -> None:
    whole = [located.case.id for located in resolve(SUITE).cases]
    report = memeval.evaluate("reference", suites=SUITE, limit=3, database_url=store)
    assert [case.case_id for case in report.cases] == whole[:3]
    assert report.subset == "first 3 cases only"


def test_an_engine_the_workers_cannot_build_is_refused_before_any_farm_starts(
    store: str,
) -> None:
    class Local(NaiveEngine):
        pass

    with pytest.raises(UsageError, match=r"an instance of .* runs only in this process") as one:
        memeval.evaluate(CountingEngine(), farm="embedded", database_url=store)
    assert "farm=None" in one.value.fix
    with pytest.raises(UsageError, match="the farm's workers cannot import") as other:
        memeval.evaluate(Local, farm="embedded", database_url=store)
    assert "farm=None" in other.value.fix


class FlakyEngine(NaiveEngine):
    """The naive engine, failing every write while `down` is set."""

    down = False

    async def store(self, tenant: str, assertion: Assertion) -> None:
        if FlakyEngine.down:
            raise RuntimeError("the disk is full")
        await super().store(tenant, assertion)


def test_resume_finishes_a_run_whose_cases_errored(store: str, monkeypatch) -> None:
    monkeypatch.setattr(FlakyEngine, "down", True)
    cases = ["cfo_on_date", "never_stored_parking"]
    first = memeval.evaluate(FlakyEngine, suites=SUITE, only=cases, database_url=store)
    assert {c.status.value for c in first.cases} == {"error"}
    monkeypatch.setattr(FlakyEngine, "down", False)
    again = memeval.resume(first.run_id, database_url=store)
    assert again.run_id == first.run_id
    assert sorted(c.case_id.rsplit("/", 1)[1] for c in again.cases) == sorted(cases)
    assert {c.status.value for c in again.cases} == {"done"}
    with pytest.raises(UsageError, match=r"ran tests\.api\.test_api:FlakyEngine"):
        memeval.resume(first.run_id, engine=CountingEngine(), database_url=store)
