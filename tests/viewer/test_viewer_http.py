"""The viewer over real HTTP: what each page says about the runs in a real store, that it agrees
with the reports, that it only reads, that its token holds, and that it stays quick."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from memeval.report.stored import fold_run
from memeval.results import CaseResult, CaseStatus, Phase, ProbeResult
from memeval.store import PlannedCase, Store
from memeval.viewer.discovery import STATE_ENV, announce, run_url, store_key
from tests.conftest import run_cli
from tests.viewer.conftest import Runs, fresh_store, serving


def test_the_runs_list_shows_every_run_newest_first_with_its_composite(
    viewer: str, runs: Runs, store: Store
) -> None:
    page = httpx.get(f"{viewer}/api/runs").json()
    ids = [r["id"] for r in page["runs"]]
    expected = [r.run_id for r in (runs.failed, runs.scenario, runs.reference, runs.naive)]
    assert ids == expected
    assert page["total"] == 4
    for row in page["runs"]:
        folded = fold_run(store, row["id"])
        want = folded.composite
        assert row["composite"] == (None if want is None else pytest.approx(want))
        assert row["planned"] == len(folded.cases) + len(folded.missing)
    down = page["runs"][0]
    assert down["errored"] == down["planned"] > 0 and down["done"] == 0
    body = httpx.get(f"{viewer}/").text
    assert body.index("down") < body.index("ref-t") < body.index("naive-t")
    assert "100.0%" in body  # the reference engine's temporal composite


def test_filters_narrow_the_list(viewer: str, runs: Runs) -> None:
    naive = httpx.get(f"{viewer}/api/runs", params={"engine": "naive"}).json()
    assert {r["label"] for r in naive["runs"]} == {"naive-t", "naive-iso"}
    empty_boxes = httpx.get(f"{viewer}/", params={"engine": "", "status": ""})
    assert empty_boxes.status_code == 200 and "4 of 4 runs" in empty_boxes.text
    assert httpx.get(f"{viewer}/", params={"status": "nonsense"}).status_code == 422


def test_a_failed_probe_opens_to_its_pack_with_the_match_marked(viewer: str, runs: Runs) -> None:
    case = runs.scenario.cases[0]
    failed = [p for p in case.probes if not p.hit or p.leaked]
    assert failed, "naive leaks on the isolation scenario, so one probe fails"
    page = httpx.get(f"{viewer}/runs/{runs.scenario.run_id}/cases/{case.case_id}").text
    first = page.index("<article class='probe failed'>")
    assert first < page.index("<article class='probe ok'>") if "probe ok" in page else True
    assert html.escape(failed[0].question, quote=True) in page[first:]
    hit = next(p for p in case.probes if p.hit and p.expect)
    marked = re.findall(r"<mark class='hit'>(.*?)</mark>", page)
    assert any(m.lower() == html.escape(hit.expect[0].lower(), quote=True) for m in marked)


def test_the_run_page_puts_failures_first_and_links_the_full_report(
    viewer: str, runs: Runs
) -> None:
    page = httpx.get(f"{viewer}/runs/{runs.naive.run_id}").text
    scores = [float(s) for s in re.findall(r"<td>(\d\.\d{3})</td>", page)]
    assert scores == sorted(scores) and len(scores) == len(runs.naive.cases)
    report = httpx.get(f"{viewer}/runs/{runs.naive.run_id}/report")
    assert report.status_code == 200 and "memeval run naive-t" in report.text
    down = httpx.get(f"{viewer}/runs/{runs.failed.run_id}").text
    assert "disk full at /var/lib/engine" in down


def test_compare_gives_the_same_verdicts_as_memeval_compare(viewer: str, runs: Runs) -> None:
    got = httpx.get(
        f"{viewer}/compare", params=[("run", runs.naive.run_id), ("run", runs.reference.run_id)]
    )
    assert got.status_code == 200
    assert "naive-t" in got.text and "ref-t" in got.text
    one = httpx.get(f"{viewer}/compare", params={"run": runs.naive.run_id})
    assert one.status_code == 400


def test_the_leaderboard_ranks_like_with_like(viewer: str, runs: Runs) -> None:
    page = httpx.get(f"{viewer}/leaderboard").text
    temporal = page.split("(temporal only)", 1)[1].split("</table>", 1)[0]
    assert temporal.index("reference") < temporal.index("naive")
    assert "down" not in page  # an errored run has no composite to rank


def test_the_viewer_only_reads(viewer: str, runs: Runs, store: Store) -> None:
    before = [r.model_dump() for r in store.list_runs(50)]
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert httpx.request(method, f"{viewer}/runs/{runs.naive.run_id}").status_code == 405
    assert [r.model_dump() for r in store.list_runs(50)] == before
    assert httpx.get(f"{viewer}/runs/nope").status_code == 404


def test_a_token_is_asked_before_anything_is_read(store: Store, runs: Runs) -> None:
    with serving(store, token="t0k3n-abc") as url:
        refused = httpx.get(f"{url}/api/runs")
        assert refused.status_code == 401 and "naive" not in refused.text
        wrong = httpx.get(f"{url}/api/runs", headers={"authorization": "Bearer no"})
        assert wrong.status_code == 401
        ok = httpx.get(f"{url}/api/runs", headers={"authorization": "Bearer t0k3n-abc"})
        assert ok.status_code == 200 and ok.json()["total"] == 4
        with httpx.Client(base_url=url, follow_redirects=True) as browser:
            landed = browser.get("/", params={"token": "t0k3n-abc"})
            assert landed.status_code == 200 and "t0k3n" not in str(landed.url)
            assert browser.get("/leaderboard").status_code == 200  # the cookie carries on


def test_a_viewer_on_another_interface_refuses_to_start_without_a_token(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memeval", "view", "--host", "0.0.0.0", "--port", "8697"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 2
    assert "needs a token" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_a_run_finds_a_live_viewer_of_its_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    monkeypatch.setenv(STATE_ENV, str(tmp_path))
    key = store_key(store.url)
    assert run_url(key, "r1") is None
    note = announce(key, "http://127.0.0.1:8600")
    assert run_url(key, "r1") == "http://127.0.0.1:8600/runs/r1"
    note.write_text(note.read_text().replace(f'"pid":{os.getpid()}', '"pid":999999'))
    assert run_url(key, "r1") is None and not note.exists()  # a dead viewer's note is cleared


def test_five_hundred_runs_render_in_under_a_second(tmp_path: Path) -> None:
    store = fresh_store(tmp_path)
    plan = [PlannedCase(case_id=f"c{i}", kind="fixture", dimension="temporal") for i in range(4)]
    now = datetime.now(UTC)
    for n in range(500):
        run = store.create_run(label=f"r{n}", engine="naive", suite="all", planned=plan)
        for p in plan[:3]:
            store.upsert_case_result(
                CaseResult(
                    run_id=run.id, case_id=p.case_id, kind="fixture", dimension="temporal",
                    engine="naive", tenant=f"t{n}", status=CaseStatus.done, score=0.5,
                    started_at=now, finished_at=now,
                )
            )  # fmt: skip
    with serving(store) as url:
        httpx.get(f"{url}/", params={"per_page": 500})  # warm: imports, first connection
        took = []  # the best of three: a loaded machine slows one request, not the page's cost
        for _ in range(3):
            started = time.perf_counter()
            page = httpx.get(f"{url}/", params={"per_page": 500})
            took.append(time.perf_counter() - started)
    assert page.status_code == 200 and page.text.count("<tr class='running'>") == 500
    assert page.text.count("50.0%") == 500
    assert min(took) < 1.0, f"500 runs took {min(took):.2f} s at best"


def test_a_case_of_two_thousand_probes_comes_a_page_at_a_time(tmp_path: Path) -> None:
    store = fresh_store(tmp_path)
    plan = [PlannedCase(case_id="locomo/conv-1", kind="scenario")]
    run = store.create_run(label="big", engine="bm25", suite="locomo:x.json", planned=plan)
    pack = "# Memory\n" + "".join(f"- turn {i}: it was mild on day {i}\n" for i in range(20))
    probes = [
        ProbeResult(
            probe=f"q{i}", phase=Phase.recall, via="pre_turn", style="lexical", scored=True,
            question=f"What was the weather on day {i}?", expect=[f"day {i}"], pack=pack,
            hit=i % 3 != 0,
        )
        for i in range(2000)
    ]  # fmt: skip
    store.upsert_case_result(
        CaseResult(
            run_id=run.id, case_id="locomo/conv-1", kind="scenario", engine="bm25", tenant="t",
            status=CaseStatus.done, score=0.66, probes=probes,
        )
    )  # fmt: skip
    with serving(store) as url:
        first = httpx.get(f"{url}/runs/{run.id}/cases/locomo/conv-1")
        started = time.perf_counter()
        second = httpx.get(f"{url}/runs/{run.id}/cases/locomo/conv-1", params={"page": 2})
        took = time.perf_counter() - started
    assert first.text.count("<article class='probe") == 100
    assert first.text.count("<article class='probe failed'>") == 100  # 667 failed: all first
    assert "probes 1–100 of 2000" in first.text and "page=2" in first.text
    assert "probes 101–200 of 2000" in second.text
    assert took < 2.0, f"a page of a 2,000-probe case took {took:.2f} s"


def test_memeval_run_prints_its_page_on_a_live_viewer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = fresh_store(tmp_path)
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "state"))
    announce(store_key(store.url), "http://127.0.0.1:8600")  # as this (live) viewer process
    done = run_cli(
        "run", "--in-process", "--engine", "naive", "--dimension", "provenance",
        cwd=tmp_path, env={"MEMEVAL_DATABASE_URL": str(store.url)},
    )  # fmt: skip
    assert done.returncode in (0, 3), done.stderr
    (run,) = store.list_runs(5)
    assert f"view: http://127.0.0.1:8600/runs/{run.id}" in done.stdout
