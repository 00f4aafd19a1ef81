"""Sweeps: the interleaving as a pure function, and whole sweeps over real HTTP and Redis, one
of them cut short by its budget."""

from __future__ import annotations

import asyncio

import pytest
import redis
from hypothesis import given
from hypothesis import strategies as st

from memeval.errors import UsageError
from memeval.llm.estimate import planned_calls
from memeval.llm.sweep import (
    Job,
    Profile,
    SweepConfig,
    SweepReport,
    common_subset,
    execute,
    interleave,
    parse_profile,
    sweep,
)
from memeval.plan import CaseRef, select
from memeval.results import CaseResult, CaseStatus
from memeval.suites.catalog import resolve
from tests.llm.fakes import WordEngine

MODELS = ["test/cheap", "test/dear"]


def refs(n: int) -> list[CaseRef]:
    return [CaseRef(case_id=f"c{i}", trial=0) for i in range(n)]


@given(cases=st.integers(1, 30), models=st.integers(1, 5), data=st.data())
def test_any_prefix_covers_every_variant_equally(cases, models, data):
    names = [f"m{i}" for i in range(models)]
    jobs = interleave(refs(cases), names)
    assert len(jobs) == cases * models
    cut = data.draw(st.integers(0, len(jobs)))
    done = {name: [j.case.case_id for j in jobs[:cut] if j.variant == name] for name in names}
    sizes = [len(v) for v in done.values()]
    assert max(sizes) - min(sizes) <= 1
    common = set.intersection(*(set(v) for v in done.values()))
    assert common == {f"c{i}" for i in range(cut // models)}


def test_interleave_is_case_major():
    jobs = interleave(refs(2), ["a", "b"])
    assert [(j.case.case_id, j.variant) for j in jobs] == [
        ("c0", "a"),
        ("c0", "b"),
        ("c1", "a"),
        ("c1", "b"),
    ]


def test_execute_starts_jobs_in_order_with_bounded_concurrency():
    jobs = interleave(refs(12), ["a", "b", "c"])
    started: list[Job] = []
    running = 0
    peak = 0

    async def run_one(job: Job) -> CaseResult:
        nonlocal running, peak
        started.append(job)
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.001 * (len(started) % 3))
        running -= 1
        return CaseResult(
            run_id="r",
            case_id=job.case.case_id,
            kind="fixture",
            engine="e",
            tenant="t",
            status=CaseStatus.done,
        )

    landed = asyncio.run(execute(jobs, run_one, concurrency=4))
    assert started == jobs and peak == 4 and len(landed) == len(jobs)


def test_common_subset_needs_every_variant_done():
    def result(case: str, status: CaseStatus) -> CaseResult:
        return CaseResult(
            run_id="r", case_id=case, kind="fixture", engine="e", tenant="t", status=status
        )

    results = {
        "a": [result("x", CaseStatus.done), result("y", CaseStatus.done)],
        "b": [result("x", CaseStatus.done), result("y", CaseStatus.skipped_budget)],
    }
    assert common_subset(results) == ["x#0"]


def test_profiles():
    profile = parse_profile("small: --engine words --k 3", "reference")
    assert profile == Profile(name="small", engine="words", k=3)
    assert parse_profile("plain:", "reference").engine == "reference"
    for bad in ("no-colon", "x: --model m", "x: --k", "x: --k zero", "bad name!: --k 3"):
        with pytest.raises(UsageError):
            parse_profile(bad, "reference")


def run_sweep_over(server, redis_url, suite, budget_usd, profiles=None, concurrency=4):
    cases = select(resolve(suite), [], [])
    config = SweepConfig(
        models=MODELS,
        budget_usd=budget_usd,
        profiles=profiles or [Profile(name="words", engine="words")],
        suite=suite,
        base_url=server.base_url,
        concurrency=concurrency,
        redis_url=redis_url,
    )
    lines: list[str] = []
    report = asyncio.run(sweep(config, cases, lambda _: WordEngine(), say=lines.append))
    forget(redis_url, report.sweep_id)
    return cases, report, lines


def forget(redis_url: str, sweep_id: str) -> None:
    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(match=f"memeval:budget:sweep:{sweep_id}*"):
        client.delete(key)
    client.close()


def test_a_sweep_cut_short_by_its_budget_still_reports(server, redis_url):
    cases, report, lines = run_sweep_over(server, redis_url, "dimensions", budget_usd=0.04)
    again = SweepReport.model_validate_json(report.model_dump_json())
    assert again == report
    assert any("expected $" in line for line in lines)

    assert report.budget_closed == "exhausted"
    assert report.skipped_budget > 0 and report.done > 0
    assert report.spent_usd <= report.budget_usd
    assert round(report.spent_usd * 1e6) == server.billed_micros
    assert report.planned == len(cases) * len(MODELS)
    assert report.done + report.skipped_budget + report.errors == report.planned

    order = {c.id: i for i, c in enumerate(cases)}
    done_sets = []
    for run in report.runs:
        assert run.report.missing == []  # every planned case has a result
        assert len(run.report.cases) == len(cases)
        done = {c.case_id for c in run.report.cases if c.status is CaseStatus.done}
        skipped = [order[c.case_id] for c in run.report.cases if c.status is not CaseStatus.done]
        # Interleaved dispatch: what was done comes before what was skipped, give or take the
        # jobs in flight when the money ran out.
        assert max(order[c] for c in done) - min(skipped) <= 4
        done_sets.append(done)
    assert len(done_sets[0] ^ done_sets[1]) <= 4, "one model answered cases the other did not"
    assert 0 < len(report.common) < len(cases)
    assert report.coverage == round(len(report.common) / len(cases), 4)
    for row in report.comparison:
        assert row.cases == len(report.common)
        assert row.answers > 0 and row.model_answer is not None
    cheap, dear = report.comparison
    assert dear.answerer_usd > cheap.answerer_usd  # same calls, three times the price


def test_a_sweep_within_budget_covers_everything_and_sweeps_profiles(server, redis_url):
    profiles = [Profile(name="k5", engine="words"), Profile(name="k1", engine="words", k=1)]
    cases, report, _ = run_sweep_over(server, redis_url, "lifecycle", 50.0, profiles)
    assert report.budget_closed is None and report.skipped_budget == 0
    assert report.coverage == 1.0 and len(report.common) == len(cases)
    assert [r.variant for r in report.comparison] == [
        "k5/test/cheap",
        "k5/test/dear",
        "k1/test/cheap",
        "k1/test/dear",
    ]
    assert all(row.answers > 0 for row in report.comparison)
    assert len({r.variant.run_id for r in report.runs}) == 4
    # `memeval estimate` counts exactly the calls a sweep makes.
    assert len(server.calls) == len(planned_calls(cases)) * len(report.comparison)


def test_sweep_command_refuses_a_zero_or_negative_budget(cli):
    for value in ("0", "-2"):
        result = cli("sweep", "--models", "a/b", "--budget-usd", value)
        assert result.returncode == 2, result.stderr
        assert "--budget-usd must be positive" in result.stderr
        assert "Traceback" not in result.stderr
    bad_rate = cli("sweep", "--models", "a/b", "--budget-usd", "1", "--rate", "model=5/d")
    assert bad_rate.returncode == 2 and "unknown unit" in bad_rate.stderr


def test_sweep_command_end_to_end(cli, server, redis_url, tmp_path):
    out = tmp_path / "sweep.json"
    result = cli(
        "sweep",
        "--models",
        ",".join(MODELS),
        "--budget-usd",
        "0.02",
        "--suite",
        "dimensions",
        "--profile",
        "naive: --engine naive",
        "--profile",
        "ref3: --engine reference --k 3",
        "--rate",
        "model=500/s",
        "--rate",
        "engine=1000/s",
        "--base-url",
        server.base_url,
        "--redis-url",
        redis_url,
        "--json",
        str(out),
        env={"COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    report = SweepReport.model_validate_json(out.read_text())
    forget(redis_url, report.sweep_id)
    assert report.budget_closed == "exhausted" and report.skipped_budget > 0
    assert report.spent_usd <= 0.02 and round(report.spent_usd * 1e6) == server.billed_micros
    assert [r.variant for r in report.comparison] == [
        "naive/test/cheap",
        "naive/test/dear",
        "ref3/test/cheap",
        "ref3/test/dear",
    ]
    assert all(r.cases == len(report.common) > 0 for r in report.comparison)
    for text in ("comparison on the common subset", "skipped_budget", "expected $"):
        assert text in result.stdout
