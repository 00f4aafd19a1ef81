"""On the farm: a case that infrastructure breaks off is rerun from the start on a fresh
tenant and scores as if nothing happened; a case that cannot be run at all is an error, kept
out of the score, and every surface says the composite is partial and which cases it lacks."""

from __future__ import annotations

import json
import re

from memeval.results import RunReport
from tests.farm.conftest import Farm
from tests.faults.engines import BROKEN, DOWN_ENV

ABSTENTION = 10


def report(farm: Farm, label: str) -> RunReport:
    return RunReport.model_validate(farm.report(label))


def test_a_broken_off_case_reruns_on_a_fresh_tenant_and_scores_the_same(farm: Farm):
    farm.env.update(MEMEVAL_RETRY_BACKOFF="0.1")
    only = ["--only", "lifecycle/conflicts", "--only", "dimensions/conflict/deal_value_confidence"]
    out = farm.tmp / "out"
    clean = farm.run("run", "--label", "clean", "--out", str(out / "clean"), *only)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    broken = farm.run(
        "run", "--engine", BROKEN, "--label", "broken", "--out", str(out / "broken"), *only
    )
    assert broken.returncode == 0, broken.stdout + broken.stderr
    before, after = report(farm, "clean"), report(farm, "broken")
    assert [c.attempt for c in after.cases] == [1, 1]
    assert all(c.tenant.endswith("-a1") for c in after.cases)
    assert after.case_restarts == 2 and not after.partial
    assert [c.score for c in after.cases] == [c.score for c in before.cases]
    assert [k.value for k in after.kpis if k.group != "latency"] == [
        k.value for k in before.kpis if k.group != "latency"
    ]
    assert "2 cases restarted on a fresh tenant" in broken.stdout


def test_unreachable_cases_are_errors_and_the_composite_says_partial(farm: Farm):
    farm.env.update(
        MEMEVAL_RETRIES="1",
        MEMEVAL_RETRY_BACKOFF="0.1",
        **{DOWN_ENV: "abstention/never_stored"},  # two of the ten abstention fixtures
    )
    out = farm.tmp / "out" / "down"
    done = farm.run(
        "run", "--engine", BROKEN, "--dimension", "abstention", "--label", "down", "--out", str(out)
    )
    text = done.stdout + done.stderr
    assert done.returncode == 1, text  # not "all done"
    run = report(farm, "down")
    errored = sorted(c.case_id for c in run.cases if c.status.value == "error")
    assert errored == [
        "dimensions/abstention/never_stored_headcount",
        "dimensions/abstention/never_stored_parking",
    ]
    assert all(
        "engine unavailable after 2 attempts" in (c.error or "")
        for c in run.cases
        if c.status.value == "error"
    )
    # The composite is over the eight that ran, and every surface marks it partial.
    assert run.partial and len(run.unscored) == 2 and all("(error)" in u for u in run.unscored)
    assert run.composite == 1.0
    assert re.search(r"composite \(abstention only, partial\)", text)
    assert f"partial: 2 of {ABSTENTION} planned cases are not in the score" in text
    assert "never_stored_headcount#0 (error)" in text
    md = (out / "report.md").read_text()
    assert "**Composite (abstention only, partial) 100.0%**" in md
    assert "Partial: 2 of 10 planned cases are not in the score" in md
    assert "never_stored_parking#0 (error)" in md
    html = (out / "report.html").read_text()
    assert "partial: 2 of 10 planned cases" in html
    assert "composite (abstention only, partial)" in html
    saved = json.loads((out / "report.json").read_text())
    assert saved["partial"] is True and len(saved["unscored"]) == 2
    listed = farm.run("runs")
    assert "finished, partial" in listed.stdout, listed.stdout
    [row] = json.loads(farm.run("runs", "--json").stdout)
    assert row["partial"] is True
