"""The HTML reports, drawn in headless Chromium, show the numbers in the same forms as the
markdown and the terminal: the strings `memeval.report.numbers` wrote, not the script's own."""

from __future__ import annotations

import re

from memeval.report import write_reports
from memeval.report.compare import compare
from memeval.report.html import render_compare_html
from memeval.report.numbers import DASH, number
from tests.report.chromium import Elements, browse
from tests.report.factory import make_report


def _row(cells: list[str], first: str, width: int) -> list[str]:
    at = cells.index(first)
    return cells[at : at + width]


def test_the_run_page_shows_unmeasured_spend_as_a_dash(tmp_path):
    report = make_report(label="fmt", seed=7)
    page = write_reports(report, tmp_path / "out")["html"]
    cells = Elements(browse(page, tmp_path / "profile", "--dump-dom").stdout).cells
    kpis = {k.name: k for k in report.overall_kpis}
    # group, kpi, value, 95% CI, better, n
    assert _row(cells, "answerer_usd", 3)[1] == DASH
    assert _row(cells, "usd_per_correct", 3)[1] == DASH
    assert _row(cells, "mrr", 2)[1] == number(kpis["mrr"].value, "score")
    assert _row(cells, "probe_p50", 2)[1] == number(kpis["probe_p50"].value, "ms")


def test_the_compare_page_never_calls_latency_worse(tmp_path):
    base = make_report(label="base", seed=1)
    slow = make_report(label="slow", seed=2)
    for case in slow.cases:  # every timing ten times longer: a move beyond jitter
        for timing in case.timings:
            timing.ms *= 10
    html = tmp_path / "compare.html"
    html.write_text(render_compare_html(compare([base, slow], resamples=200)))
    dom = browse(html, tmp_path / "profile", "--dump-dom").stdout
    row = re.search(r"<tr>(?:(?!</tr>).)*>probe_p50<(?:(?!</tr>).)*</tr>", dom)
    assert row is not None
    assert ">changed (never gates)</span>" in row[0] and "worse" not in row[0]
    cells = Elements(row[0]).cells
    assert cells[:2] == ["latency", "probe_p50"]
    assert cells[4].startswith("+") and cells[4].endswith(" ms")
