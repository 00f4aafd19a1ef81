"""Reports of published-benchmark size: the HTML summary stays the same size whatever the run's,
every probe and check is on exactly one case page the summary links, and the markdown lists
the failures instead of every case."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks.report_speed import longmemeval_run
from memeval.errors import UsageError
from memeval.report.html import FAILURES, PAGE_ITEMS, items, pages_folder, render_pages
from memeval.report.intervals import run_intervals
from memeval.report.markdown import MISS_LINES, render
from memeval.report.tables import SCENARIO_ROWS
from memeval.report.write import write_html
from memeval.results import RunReport
from memeval.store import PlannedCase
from tests.cli_here import run_cli_here
from tests.report.chromium import Elements, browse
from tests.viewer.conftest import fresh_store, serving

DATA = re.compile(r'<script type="application/json" id="memeval-data">(.*?)</script>', re.S)


def data(html: str) -> dict[str, Any]:
    found = DATA.search(html)
    assert found is not None, "no data in the page"
    parsed: dict[str, Any] = json.loads(found.group(1))
    return parsed


def key(item: dict[str, Any]) -> tuple[str, int, str, str]:
    return item["case"], item["trial"], item["item"], item["phase"]


@pytest.fixture(scope="module")
def runs() -> dict[int, RunReport]:
    return {n: longmemeval_run(n) for n in (300, 1500)}


@pytest.fixture(scope="module")
def written(runs, tmp_path_factory) -> dict[int, Path]:
    """Each run's HTML as `memeval run` writes it, intervals on few resamples (not timed)."""
    out = {}
    for n, report in runs.items():
        path = tmp_path_factory.mktemp(f"html{n}") / "report.html"
        write_html(report, path, run_intervals(report, resamples=100))
        out[n] = path
    return out


def test_the_summary_page_does_not_grow_with_the_run(written):
    small, large = (written[n].stat().st_size for n in (300, 1500))
    assert large < 1_000_000  # the first failures with their packs, never the whole run
    assert large < 1.1 * small  # five times the cases: a longer page index, nothing more
    summary = data(written[1500].read_text())
    assert len(summary["items"]) == FAILURES
    assert summary["failures"] == 1000  # every third case is an abstention: both probes miss
    assert len(summary["heat"]["rows"]) == SCENARIO_ROWS + 1  # the worst, then `all`


def test_every_probe_is_on_exactly_one_page_and_every_link_resolves(written, runs):
    main = written[1500]
    summary = data(main.read_text())
    folder = pages_folder(main)
    pages = sorted(folder.iterdir())
    assert [main.parent / entry["href"] for entry in summary["index"]] == pages
    seen = []
    for n, path in enumerate(pages):
        page = data(path.read_text())
        assert page["kind"] == "cases" and page["page"] == n + 1
        assert (path.parent / page["summary"]).resolve() == main.resolve()
        for link, there in ((page["prev"], n - 1), (page["next"], n + 1)):
            if 0 <= there < len(pages):
                assert path.parent / link == pages[there]
            else:
                assert link is None
        assert 0 < len(page["items"]) <= PAGE_ITEMS
        seen += [key(item) for item in page["items"]]
    every = [key(item) for case in runs[1500].cases for item in items(case)]
    assert seen == every  # all of them, once each, in case order
    for failure in summary["items"]:  # each failure links the page that holds it
        holder = data((main.parent / failure["href"]).read_text())
        assert key(failure) in [key(item) for item in holder["items"]]


def test_a_case_larger_than_a_page_spans_pages_and_small_runs_stay_one_page(runs):
    report = runs[300].model_copy(deep=True)
    big = report.cases[0]
    big.probes = big.probes * (PAGE_ITEMS // 2 + 10)  # more probes than a page holds
    written = render_pages(report, intervals=run_intervals(report, resamples=100))
    first, second = (data(text)["items"] for text in list(written.pages.values())[:2])
    assert len(first) == PAGE_ITEMS and second[0]["case"] == first[0]["case"]
    small = runs[300].model_copy(update={"cases": runs[300].cases[:10]})
    assert render_pages(small, intervals=run_intervals(small, resamples=100)).pages == {}


def test_rewriting_a_smaller_report_leaves_no_stale_pages(runs, tmp_path):
    path = tmp_path / "mine.html"
    write_html(runs[300], path, run_intervals(runs[300], resamples=100))
    assert len(list((tmp_path / "mine-cases").iterdir())) == 3  # 600 items, 250 a page
    small = runs[300].model_copy(update={"cases": runs[300].cases[:10]})
    assert write_html(small, path, run_intervals(small, resamples=100)) == []
    assert not (tmp_path / "mine-cases").exists()
    assert "report-cases" not in path.read_text()


def test_pages_never_overwrite_a_folder_of_other_files(runs, tmp_path):
    (tmp_path / "report-cases").mkdir()
    (tmp_path / "report-cases" / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="holds files other than case pages"):
        write_html(runs[300], tmp_path / "report.html", run_intervals(runs[300], resamples=100))
    assert (tmp_path / "report-cases" / "notes.txt").read_text() == "mine"


def test_the_markdown_lists_failures_not_every_case(runs):
    md = render(runs[1500], run_intervals(runs[1500], resamples=100))
    assert len(md) < 250_000
    assert sum(line.startswith("- `lifecycle/") for line in md.splitlines()) == MISS_LINES
    assert "1000 misses: the first 50 with the head of their pack, 150 more as a line each" in md
    assert "the other 800 are not listed here" in md
    assert f"The {SCENARIO_ROWS} of 1500 scenarios missing the most probes" in md
    rows = re.findall(r"^\| (longmemeval-gen_\S+) \| (?:recall|synthesis) \|", md, re.M)
    assert len(rows) == 2 * SCENARIO_ROWS
    assert all(name.endswith("_abs") for name in rows)  # the scenarios that missed


def test_report_command_writes_pages_beside_the_file_it_is_given(runs, tmp_path):
    source = tmp_path / "run.json"
    source.write_text(runs[300].model_dump_json())
    out = tmp_path / "share" / "lme.html"
    done = run_cli_here(
        "report", str(source), "--format", "html", "--out", str(out), "--resamples", "100"
    )
    assert done.returncode == 0, done.stderr
    assert f"its 3 case pages in {tmp_path / 'share' / 'lme-cases'}/" in done.stderr
    assert [e["href"] for e in data(out.read_text())["index"]] == [
        f"lme-cases/00{n}.html" for n in (1, 2, 3)
    ]
    one = run_cli_here("report", str(source), "--format", "html", "--resamples", "100")
    assert one.returncode == 0, one.stderr
    assert len(data(one.stdout)["items"]) == 600  # stdout: one file, every probe in it


def test_the_summary_and_a_case_page_draw_in_chromium(written, runs, tmp_path):
    main = written[1500]
    summary = data(main.read_text())
    page = Elements(browse(main, tmp_path / "profile", "--dump-dom").stdout)
    assert page.all("body", **{"data-rendered": "true"})
    assert len(page.all("tr", class_="item")) == FAILURES  # the first failures, a view
    assert len(page.all("a", class_="page-link")) == FAILURES + len(summary["index"])
    assert len(page.all("span", class_="fail")) == FAILURES and not page.all("span", class_="ok")
    failure = summary["items"][0]
    link = failure["href"] + "#case=" + failure["case"] + "&open"
    assert page.all("a", href=link)
    held = [key(i) for i in data((main.parent / failure["href"]).read_text())["items"]]
    case_page = main.parent / failure["href"]
    opened = browse(case_page, tmp_path / "p2", "--dump-dom", fragment=link[len(failure["href"]) :])
    shown = Elements(opened.stdout)
    mine = [k for k in held if k[0] == failure["case"]]
    assert len(shown.all("tr", class_="item")) == len(mine) == 2  # that case alone, opened
    assert len(shown.all("pre", class_="pack")) == 2
    assert shown.all("a", class_="summary", href="../report.html")


def test_the_viewer_serves_the_summary_and_its_pages(runs, tmp_path):
    report = runs[300]
    store = fresh_store(tmp_path)
    store.create_run(
        run_id=report.run_id,
        label=report.label,
        engine=report.engine,
        suite=report.suite,
        planned=[PlannedCase(case_id=c.case_id, trial=c.trial, kind=c.kind) for c in report.cases],
    )
    for case in report.cases:
        store.upsert_case_result(case)
    # Each page folds the run from the store afresh: seconds on a loaded machine.
    with serving(store) as url, httpx.Client(timeout=120) as http:
        base = f"{url}/runs/{report.run_id}/"
        summary = http.get(base + "report")
        assert summary.status_code == 200 and len(summary.text) < 1_000_000
        index = data(summary.text)["index"]
        seen = []
        for entry in index:  # relative links, resolved as a browser resolves them
            page = http.get(base + entry["href"])
            assert page.status_code == 200
            got = data(page.text)
            assert got["summary"] == "../report"  # from report-cases/: the summary above
            seen += [key(item) for item in got["items"]]
        assert seen == [key(item) for case in report.cases for item in items(case)]
        assert http.get(base + "report-cases/999.html").status_code == 404
