"""The HTML report in headless Chromium: the charts and the table are drawn, nothing is fetched,
and text from packs stays text."""

from __future__ import annotations

import shutil
import struct

import pytest

from memeval.report import write_reports
from memeval.report.compare import compare
from memeval.report.html import items, render_compare_html
from memeval.report.tables import latency_rows
from tests.report.chromium import VIEW, Elements, browse, chromium
from tests.report.factory import HOSTILE, SCENARIOS


@pytest.fixture(scope="module")
def written(tmp_path_factory, reference_run):
    out = tmp_path_factory.mktemp("html")
    return write_reports(reference_run, out)["html"]


@pytest.fixture(scope="module")
def dom(written, tmp_path_factory):
    """The run report's DOM once its scripts ran: one Chromium start for the tests reading it."""
    return browse(written, tmp_path_factory.mktemp("profile"), "--dump-dom").stdout


def test_the_run_report_draws_its_charts_and_table(dom, reference_run):
    page = Elements(dom)
    assert page.all("body", **{"data-rendered": "true"})
    assert page.shapes("dimensions", "rect", "bar") == 6  # five dimensions and the composite
    assert page.shapes("dimensions", "line", "ci") == 18  # whisker and two caps each
    assert page.shapes("heatmap", "rect", "cell") == 2 * (SCENARIOS + 1)
    assert page.shapes("latency", "rect", "box") == len(latency_rows(reference_run.cases))
    assert page.shapes("cost", "rect", "bar") >= 2 * 7
    units = sum(len(c.probes) + len(c.checks) for c in reference_run.cases)
    assert units > VIEW  # enough to need a second view of the table
    assert len(page.all("tr", class_="item")) == VIEW  # a view at a time, however many
    assert f"1–{VIEW} of {units} shown" in dom
    failing = sum(not i["ok"] for case in reference_run.cases for i in items(case))
    assert 0 < failing < VIEW
    marks = [a["class"] for t, a in page.found if t == "span" and a.get("class") in ("ok", "fail")]
    assert marks == ["fail"] * failing + ["ok"] * (VIEW - failing)  # failures first
    assert not page.all("tr", class_="detail")  # closed until clicked


def test_pack_text_stays_text(written, tmp_path):
    # The rows asking it, wherever they fall among the table's views.
    found = browse(written, tmp_path / "profile", "--dump-dom", fragment="#q=value%20for%20p0")
    page = Elements(found.stdout)
    assert len(page.all("script")) == 2  # the data and the page's own code, nothing injected
    assert not page.all("img") and not page.all("b")
    assert any(HOSTILE in cell for cell in page.cells)  # shown verbatim, as text


def test_a_link_can_search_and_open_the_table(written, tmp_path):
    dom = browse(written, tmp_path / "profile", "--dump-dom", fragment="#q=scenario_03&open").stdout
    page = Elements(dom)
    shown = [a for a in page.all("tr", class_="item") if "hidden" not in a]
    assert len(shown) == 10  # five probes, two phases
    assert len(page.all("tr", class_="detail")) == 10
    assert len(page.all("pre", class_="pack")) == 10


def test_the_page_renders_to_a_real_screenshot(written, tmp_path):
    shot = tmp_path / "report.png"
    browse(written, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,2400")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 2400)
    assert len(data) > 100_000  # charts and tables, not a blank page


def test_the_compare_page_draws_its_forest_plots(tmp_path, reference_run, naive_run):
    html = tmp_path / "compare.html"
    html.write_text(render_compare_html(compare([reference_run, naive_run], resamples=200)))
    page = Elements(browse(html, tmp_path / "profile", "--dump-dom").stdout)
    assert page.all("body", **{"data-rendered": "true"})
    assert page.shapes("forest", "circle", "worse") >= 4
    assert page.shapes("forest", "circle", "point") >= 10


def test_a_missing_chromium_fails_with_the_install_command(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(pytest.fail.Exception, match=r"apt-get install -y chromium"):
        chromium()
