"""The issue's "done when", on real runs of the built-in suites by the in-process runner."""

from __future__ import annotations

import pytest

from memeval.errors import GateFailed
from memeval.report import write_reports
from memeval.report.compare import Verdict, compare
from memeval.report.compare_markdown import render_compare
from memeval.report.gate import EXIT_REGRESSION, enforce_gates
from memeval.results import RunReport
from tests.report.chromium import VIEW, Elements, browse


def test_a_real_run_writes_all_three_files(tmp_path, real_reference):
    paths = write_reports(real_reference, tmp_path)
    assert {p.name for p in paths.values()} == {"report.md", "report.json", "report.html"}
    assert RunReport.model_validate_json(paths["json"].read_text()) == real_reference
    md = paths["md"].read_text()
    assert "## Accuracy by scenario and phase" in md and "## Latency per step" in md
    assert not (tmp_path / "report-cases").exists()  # the built-in suites fit one page
    dom = browse(paths["html"], tmp_path / "profile", "--dump-dom").stdout
    page = Elements(dom)
    assert page.shapes("dimensions", "rect", "bar") == 6
    assert page.shapes("heatmap", "rect", "cell") > 20
    assert page.shapes("latency", "rect", "box") > 5
    units = sum(len(c.probes) + len(c.checks) for c in real_reference.cases)
    assert len(page.all("tr", class_="item")) == VIEW  # drawn a view at a time
    assert f"1–{VIEW} of {units} shown" in dom


def test_two_runs_of_the_reference_engine_are_within_noise(real_reference, real_reference_again):
    """The second run has two trials: sums such as beliefs built are compared per pass."""
    result = compare([real_reference, real_reference_again])
    [c] = result.comparisons
    assert c.verdict == "within noise", render_compare(result)
    assert "beliefs_built" in result.per_pass


def test_naive_against_reference_is_a_clear_regression_naming_the_dimensions(
    real_reference, real_naive
):
    result = compare([real_reference, real_naive])
    [c] = result.comparisons
    assert c.verdict == "clear regression"
    worse = {m.name for m in c.moved(Verdict.worse)}
    assert {"composite", "temporal", "conflict", "multihop", "abstention", "provenance"} <= worse
    assert "worse on composite; dimensions temporal, conflict, multihop, abstention" in c.headline
    assert f"- **{c.headline}**" in render_compare(result)


def test_fail_on_regression_catches_the_naive_engine(real_reference, real_naive):
    with pytest.raises(GateFailed) as err:
        enforce_gates(real_naive, baseline=real_reference, resamples=300)
    assert err.value.exit_code == EXIT_REGRESSION
    assert enforce_gates(
        real_reference,
        baseline=real_reference.model_copy(update={"run_id": "earlier"}),
        resamples=300,
    )[0].startswith("no regression")
