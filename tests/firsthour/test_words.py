"""What a newcomer reads on a first run (issue 29, item 8 and the README's examples): every KPI
has a meaning (`memeval kpis`, docs/kpis.md), the summary ends with one line of what was done,
counts agree with their nouns, and bad values say what to write instead.

Commands run through the entry point `python -m memeval` calls (`tests.cli_here`)."""

from __future__ import annotations

import re

import pytest

from memeval.cli.kpis import listed, markdown
from memeval.scoring.kpis import merge, records
from memeval.scoring.meanings import MEANINGS
from memeval.summary import readable_engine
from tests.cli_here import run_cli_here
from tests.conftest import ROOT


def test_every_kpi_a_run_reports_has_a_meaning_and_says_what_n_counts():
    reported = {r[1] for r in records(merge([]))}
    assert reported <= MEANINGS.keys(), reported - MEANINGS.keys()
    assert {name for _, name, _, _ in listed()} == MEANINGS.keys()  # none left over
    for name, meaning in MEANINGS.items():
        assert meaning.what.strip() and meaning.n.strip(), name
        assert "\n" not in meaning.what, name


def test_the_kpis_page_is_what_memeval_kpis_prints():
    page = (ROOT / "docs" / "kpis.md").read_text(encoding="utf-8")
    assert page == markdown(), "regenerate: memeval kpis --format markdown > docs/kpis.md"
    shown = run_cli_here("kpis", "--format", "markdown")
    assert shown.returncode == 0 and shown.stdout == page
    text = run_cli_here("kpis", env={"COLUMNS": "200"})
    assert text.returncode == 0
    for name in ("synthesis_gain", "usd_per_correct", "conflict_pack_hit", "pack_hit"):
        assert re.search(rf"\b{name}\b", text.stdout), name
    assert "once per phase" in text.stdout  # what pack_hit's n counts


def test_the_summary_ends_with_what_was_done(tmp_path):
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'memeval.db'}", "COLUMNS": "120"}
    only = ("--only", "dimensions/temporal/cfo_on_date")
    done = run_cli_here(
        "run", "--in-process", *only, "--out", str(tmp_path / "r"), cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(
        r"1 of 1 case done in \d+\.\d s · what each KPI means: `memeval kpis`", last
    )


@pytest.mark.parametrize(
    ("given", "fix"),
    [("90", "--fail-under 0.9 for 90%"), ("-1", "--fail-under 0.9"), ("1.5", "--fail-under 0.9")],
)
def test_fail_under_takes_a_share_and_says_so(given, fix):
    for command in (("run", "--dimension", "temporal"),):
        done = run_cli_here(*command, "--fail-under", given)
        assert done.returncode == 2
        assert f"--fail-under takes a share from 0 to 1, not {given}" in done.stderr
        assert f"fix: e.g. {fix}" in done.stderr and "╭" not in done.stderr


def test_model_options_without_llm_are_named_in_good_grammar():
    one = run_cli_here("run", "--model", "x")
    assert one.returncode == 2 and "--model applies only when a model answers" in one.stderr
    two = run_cli_here("run", "--model", "x", "--judge", "y", "--max-tokens", "9")
    assert "--model, --judge and --max-tokens apply only when a model answers" in two.stderr


def test_an_engine_reference_reads_as_written():
    stored = "http?url=http%3A%2F%2F127.0.0.1%3A9000&token_env=T"
    assert readable_engine(stored) == "http?url=http://127.0.0.1:9000&token_env=T"


def test_one_case_is_one_case(tmp_path):
    case = ROOT / "fixtures" / "dimensions" / "temporal" / "cfo_on_date.yaml"
    done = run_cli_here("suites", "validate", str(case))
    assert done.returncode == 0 and "ok: 1 case in 1 file" in done.stdout
