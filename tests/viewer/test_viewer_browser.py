"""The viewer in headless Chromium: the runs list and compare, a run filling in live as its
cases land in the store, a failed probe's drill-down, and the token refusal."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from memeval.results import CaseResult, CaseStatus
from memeval.store import PlannedCase, Store
from tests.viewer.cdp import browser
from tests.viewer.conftest import Runs, fresh_store, serving


def test_runs_are_listed_and_two_selected_are_compared(
    viewer: str, runs: Runs, tmp_path: Path
) -> None:
    with browser(tmp_path) as page:
        page.go(f"{viewer}/")
        assert page.read("document.querySelectorAll('#runs tbody tr').length") == 4
        assert page.read("document.getElementById('compare-button').disabled") is True
        for run in (runs.naive, runs.reference):
            page.read(f"document.querySelector('input[value=\"{run.run_id}\"]').click()")
        assert page.read("document.getElementById('compare-button').textContent") == (
            "compare 2 runs"
        )
        page.read("document.getElementById('compare-button').click()")
        page.wait_for("location.pathname === '/compare' && document.readyState === 'complete'")
        text = page.wait_for("document.body.innerText.includes('ref-t') && document.body.innerText")
        assert "naive-t" in text
        assert page.problems == []


def test_a_running_run_fills_in_live(tmp_path: Path) -> None:
    store = fresh_store(tmp_path)
    plan = [PlannedCase(case_id=f"t/c{i}", kind="fixture", dimension="temporal") for i in range(5)]
    run = store.create_run(label="live", engine="naive", suite="all", planned=plan)
    with serving(store) as url, browser(tmp_path / "profile") as page:
        page.go(f"{url}/runs/{run.id}")
        assert page.read("document.getElementById('landed').textContent") == "0 of 5"
        land(store, run.id, plan[0], CaseStatus.done, score=1.0)
        land(store, run.id, plan[1], CaseStatus.done, score=0.0)
        land(store, run.id, plan[2], CaseStatus.error, error="engine answered 503 three times")
        page.wait_for("document.getElementById('landed').textContent === '3 of 5'")
        page.wait_for("document.getElementById('errors').textContent.includes('503 three times')")
        assert page.read("document.getElementById('composite').textContent") == "50.0%"
        assert page.read("document.getElementById('progress').value") == 3
        assert page.read("document.getElementById('waiting').textContent") == "t/c3#0, t/c4#0"
        for case in plan[3:]:
            land(store, run.id, case, CaseStatus.done, score=1.0)
        store.finish_run(run.id)
        page.wait_for("document.getElementById('status').textContent === 'finished'")
        rows = page.read("document.querySelectorAll('#cases tbody tr').length")
        assert rows == 5  # the finished page lists every case, the errored one first
        assert page.read("document.querySelector('#cases tbody tr').className") == "error"
        assert page.problems == []


def test_a_failed_probe_shows_its_pack_with_matches_highlighted(
    viewer: str, runs: Runs, tmp_path: Path
) -> None:
    case = runs.scenario.cases[0]
    with browser(tmp_path) as page:
        page.go(f"{viewer}/runs/{runs.naive.run_id}")
        page.go(f"{viewer}/runs/{runs.scenario.run_id}/cases/{case.case_id}")
        first = page.read("document.querySelector('article.probe').className")
        assert first == "probe failed"
        assert page.read("document.querySelectorAll('article.probe mark.hit').length") > 0
        assert page.problems == []


def test_a_viewer_with_a_token_shows_nothing_without_it(
    store: Store, runs: Runs, tmp_path: Path
) -> None:
    with serving(store, token="s3cret-view") as url, browser(tmp_path) as page:
        page.go(f"{url}/")
        body = page.read("document.body.innerText")
        assert "needs its token" in body and "naive-t" not in body
        page.go(f"{url}/?token=s3cret-view")
        page.wait_for("document.querySelectorAll('#runs tbody tr').length === 4")
        assert "s3cret" not in page.read("location.href")


def land(
    store: Store,
    run_id: str,
    case: PlannedCase,
    status: CaseStatus,
    *,
    score: float | None = None,
    error: str | None = None,
) -> None:
    now = datetime.now(UTC)
    store.upsert_case_result(
        CaseResult(
            run_id=run_id, case_id=case.case_id, kind=case.kind, dimension=case.dimension,
            engine="naive", tenant=f"{run_id}-{case.case_id}", status=status, score=score,
            error=error, started_at=now, finished_at=now,
        )
    )  # fmt: skip
