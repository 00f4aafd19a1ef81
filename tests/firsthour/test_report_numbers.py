"""Numbers that mislead (issue 29, items 10 and 12): `n` with trials, an interval from one
case, one value printed two ways, LoCoMo's headline, the HTML cost panel when nothing was
priced and the Dimensions chart's value labels (drawn in headless Chromium)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from memeval.report import write_reports
from memeval.report.markdown import render
from memeval.report.numbers import number
from memeval.report.tables import accuracy_rows
from memeval.results import CaseResult, CaseStatus, Phase, ProbeResult
from memeval.summary import build_report
from tests.benchmarks.samples import LOCOMO, write
from tests.cli_here import run_cli_here
from tests.report.chromium import browse
from tests.report.conftest import run_engine
from tests.report.factory import FIXTURES, make_report


def _section(md: str, title: str) -> str:
    return md.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_trials_never_pass_for_fixtures():
    md = render(make_report(label="three", trials=3, seed=4))
    dims = _section(md, "Dimensions")
    assert f"{FIXTURES * 3}" not in re.findall(r"\| (\d+) \|", dims)
    assert re.search(r"\| \d+ × 3 trials \|", dims)
    headline = _section(md, "Headline")
    assert re.search(r"n=\d+ \(\d+ cases × 3 trials\)", headline)


def test_a_number_from_one_case_has_no_interval():
    md = render(make_report(label="one", scenarios=0, fixtures=1, seed=5))
    headline = _section(md, "Headline")
    assert "95% CI n/a" in headline
    assert not re.search(r"(\d+\.\d%) – \1", md)  # no zero-width interval anywhere


def _probe(i: int, rank: int) -> ProbeResult:
    return ProbeResult(
        probe=f"p{i}", phase=Phase.recall, via="ask", style="lexical", scored=True,
        question=f"q{i}", expect=["x"], pack="x", hit=True, rank=rank,
    )  # fmt: skip


def test_a_value_prints_the_same_in_every_table():
    ranks = [1, 3, 7, 2, 9]  # a mean reciprocal rank of 0.4047...: more digits than four
    case = CaseResult(
        run_id="r", case_id="lifecycle/x", kind="scenario", engine="e", tenant="t",
        status=CaseStatus.done, probes=[_probe(i, r) for i, r in enumerate(ranks)],
    )  # fmt: skip
    report = build_report(
        run_id="r", label="l", engine="e", suite="s", started_at=datetime.now(UTC),
        finished_at=None, cases=[case], planned=["lifecycle/x#0"],
    )  # fmt: skip
    exact = sum(1 / r for r in ranks) / len(ranks)
    (mrr,) = [k for k in report.kpis if k.name == "mrr" and k.tag is None]
    assert mrr.value == pytest.approx(exact, abs=1e-9)
    row = accuracy_rows(report.cases)[-1]
    assert number(mrr.value, "score") == number(row.mrr, "score")


def test_the_locomo_headline_is_evidence_recall(tmp_path):
    source = write(tmp_path, "sample.json", LOCOMO)
    md = tmp_path / "report.md"
    done = run_cli_here(
        "run", "--in-process", "--suite", f"locomo:{source}", "--engine", "bm25",
        "--md", str(md), "--out", str(tmp_path / "r"), cwd=tmp_path,
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'memeval.db'}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    headline = _section(md.read_text(), "Headline")
    assert "**Evidence recall" in headline and "Pack hit" not in headline
    # The built-in scenarios name their evidence too, but lead with pack hit, as documented.
    done = run_cli_here(
        "run", "--in-process", "--only", "lifecycle/conflicts", "--md", str(md),
        "--out", str(tmp_path / "b"), cwd=tmp_path,
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'memeval.db'}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "**Pack hit" in _section(md.read_text(), "Headline")


@pytest.fixture(scope="module")
def dom(tmp_path_factory):
    """A real run of the built-in suites on the reference engine, unpriced (no --llm, no
    engine usage), its HTML report once Chromium ran its scripts."""
    out = tmp_path_factory.mktemp("html")
    page = write_reports(run_engine("reference", "unpriced"), out)["html"]
    return browse(page, tmp_path_factory.mktemp("profile"), "--dump-dom").stdout


def _chart(dom: str, name: str) -> str:
    return re.search(rf'<svg[^>]*data-chart="{name}".*?</svg>', dom, re.S).group(0)


def test_the_cost_panel_shows_a_dash_when_nothing_was_priced(dom):
    cost = _chart(dom, "cost")
    assert "$0 each" not in cost
    assert "– each" in cost


def test_the_dimension_labels_fit_their_chart(dom):
    chart = _chart(dom, "dimensions")
    width = float(re.search(r'viewBox="0 0 (\d+)', chart).group(1))
    labels = re.findall(r'<text x="([\d.]+)"[^>]*class="value-label"[^>]*>([^<]*)</text>', chart)
    assert len(labels) == 6
    for x, text in labels:
        # 11px system-ui: digits and signs are at most 0.62 em wide.
        assert float(x) + 11 * 0.62 * len(text) <= width, text
