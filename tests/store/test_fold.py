"""The fold of a stored run (the chord callback's, `memeval report`'s) reads each payload once,
as its stored JSON text, tallies each case once, and cuts the cases by probe tag in one pass.
On real stored runs, the built-in suites and a LoCoMo-shaped file with every category, it must
give exactly what the plain definitions give: the payloads as the driver decodes them, the
KPIs of all the cases, and each tag's KPIs as the KPIs of the cases cut down to that tag's
probes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from sqlmodel import Session, col, select

from benchmarks import locomo_shaped
from memeval import api
from memeval.report.stored import fold_run
from memeval.results import CaseResult, CaseStatus, KpiGroup
from memeval.scoring.kpis import APART, TAG_KPIS, composite, dimension_scores, kpis
from memeval.store import Store
from memeval.store.tables import CaseRow

QUIET = Console(quiet=True)


def locomo_every_category(path: Path) -> Path:
    """Three generated conversations whose questions cycle through LoCoMo's five categories;
    the adversarial ones (5) are reported apart, so tags with and without `APART` are folded."""
    locomo_shaped.write(path, 3)
    conversations = json.loads(path.read_text())
    for talk in conversations:
        for n, qa in enumerate(talk["qa"]):
            qa["category"] = n % 5 + 1
            if qa["category"] == 5:
                qa["adversarial_answer"] = qa.pop("answer")
    path.write_text(json.dumps(conversations))
    return path


@pytest.fixture
def runs(store_url: str, store: Store, tmp_path: Path) -> list[str]:
    suites = [("all", 2), (f"locomo:{locomo_every_category(tmp_path / 'locomo.json')}", 1)]
    reports = [
        api.evaluate("reference", suite, trials=trials, database_url=store_url, console=QUIET)
        for suite, trials in suites
    ]
    return [report.run_id for report in reports]


def decoded(store: Store, run_id: str) -> list[CaseResult]:
    """The payloads as the driver decodes them into dicts, validated from those."""
    with Session(store.engine) as session:
        payloads = session.exec(
            select(CaseRow.payload)
            .where(CaseRow.run_id == run_id)
            .order_by(col(CaseRow.case_id), col(CaseRow.trial))
        ).all()
    return [CaseResult.model_validate(p) for p in payloads]


def test_the_fold_reads_every_payload_as_the_driver_decodes_it(store: Store, runs: list[str]):
    for run_id in runs:
        assert store.case_results(run_id) == decoded(store, run_id)


def test_the_fold_gives_the_report_the_definitions_give(store: Store, runs: list[str]):
    tags_seen: set[str] = set()
    for run_id in runs:
        report, cases = fold_run(store, run_id), decoded(store, run_id)
        assert report.cases == cases
        assert report.dimensions == dimension_scores(cases)
        assert report.composite == composite(dimension_scores(cases))
        assert report.overall_kpis == kpis(cases)
        done = [c for c in cases if c.status is CaseStatus.done and c.kind == "scenario"]
        tags = sorted({t for c in done for p in c.probes if p.scored for t in p.tags})
        expected = []
        for tag in tags:
            views = [
                c.model_copy(
                    update={
                        "probes": [
                            p.model_copy(update={"tags": [t for t in p.tags if t != APART]})
                            for p in c.probes
                            if tag in p.tags
                        ]
                    }
                )
                for c in done
            ]
            expected += [
                k.model_copy(update={"tag": tag})
                for k in kpis(views)
                if k.name in TAG_KPIS and k.group is KpiGroup.accuracy and k.value is not None
            ]
        assert [k for k in report.kpis if k.tag is not None] == expected
        tags_seen |= set(tags)
    assert APART in tags_seen and "category:temporal" in tags_seen  # both paths were folded
