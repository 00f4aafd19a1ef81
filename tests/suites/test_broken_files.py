"""Every kind of broken suite file gets exit code 2 and a message naming the file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval.errors import SuiteError
from memeval.suites.loader import load_paths
from tests.cli_here import run_cli_here

SCENARIO = """\
kind: scenario
name: tiny
title: A tiny scenario
start: 2026-01-05
documents:
  - id: doc
    title: Doc
    text: The staging database lives in ap-south-1.
probes:
  - id: region
    question: Where does the staging database live?
    style: lexical
    expect: [ap-south-1]
"""

FIXTURE = """\
kind: fixture
dimension: temporal
name: tiny
title: A tiny fixture
tests: current_state
assertions:
  - id: a1
    text: The build cache is 40 GB.
    source: ops-wiki
    confidence: 0.9
    recorded_at: 2025-02-01T00:00:00Z
queries:
  - text: How big is the build cache?
    checks:
      - contains: 40 GB
"""

# (name, base document, text to replace, replacement, field the message must name, hint)
BROKEN = [
    ("unknown-field", SCENARIO, "title: A tiny", "titel: x\ntitle: A tiny", "titel", "remove"),
    ("missing-expect", SCENARIO, "    expect: [ap-south-1]\n", "", "probes[0]", "expect"),
    ("bad-date", SCENARIO, "start: 2026-01-05", "start: 2026-13-45", "start", "ISO 8601"),
    ("bad-via", SCENARIO, "    style: lexical", "    style: lexical\n    via: shout", "via", "ask"),
    (
        "bad-confidence",
        FIXTURE,
        "confidence: 0.9",
        "confidence: 1.7",
        "confidence",
        "larger than 1",
    ),
    ("bad-check", FIXTURE, "- contains: 40 GB", "- includes: 40 GB", "checks[0]", "contains"),
    ("bad-dimension", FIXTURE, "dimension: temporal", "dimension: vibes", "dimension", "temporal"),
    ("bad-time", FIXTURE, "2025-02-01T00:00:00Z", "last tuesday", "recorded_at", "ISO 8601"),
    (
        "duplicate-probe-id",
        SCENARIO,
        "probes:\n",
        "probes:\n  - id: region\n    question: q?\n    style: lexical\n    expect: [x]\n",
        "probes",
        "unique",
    ),
]


@pytest.mark.parametrize(("name", "base", "old", "new", "field", "hint"), BROKEN)
def test_cli_rejects_broken_file(tmp_path: Path, name, base, old, new, field, hint):
    assert old in base
    path = tmp_path / f"{name}.yaml"
    path.write_text(base.replace(old, new, 1))
    done = run_cli_here("suites", "validate", str(path))
    assert done.returncode == 2, done.stdout
    assert "Traceback" not in done.stderr
    message = " ".join(done.stderr.split())
    assert str(path) in message.replace(" ", "") or path.name in message
    assert field in message
    assert hint in message


def test_the_valid_bases_are_valid(tmp_path: Path):
    (tmp_path / "s.yaml").write_text(SCENARIO)
    (tmp_path / "f.yaml").write_text(FIXTURE)
    assert len(load_paths([tmp_path])) == 2


def test_yaml_syntax_error_names_the_line(tmp_path: Path):
    path = tmp_path / "syntax.yaml"
    path.write_text(SCENARIO.replace("title: Doc", "title: [Doc"))
    with pytest.raises(SuiteError) as caught:
        load_paths([path])
    assert caught.value.path == str(path)
    assert caught.value.line is not None and caught.value.line >= 7


def test_error_line_points_at_the_field(tmp_path: Path):
    path = tmp_path / "line.yaml"
    path.write_text(FIXTURE.replace("confidence: 0.9", "confidence: 2"))
    with pytest.raises(SuiteError) as caught:
        load_paths([path])
    assert caught.value.line == 10
    assert caught.value.field == "assertions[0].confidence"


def test_duplicate_case_ids_across_files(tmp_path: Path):
    (tmp_path / "a.yaml").write_text(SCENARIO)
    (tmp_path / "b.yaml").write_text(SCENARIO)
    done = run_cli_here("suites", "validate", str(tmp_path))
    assert done.returncode == 2
    assert "duplicate case id `lifecycle/tiny`" in done.stderr
    assert "a.yaml" in done.stderr and "b.yaml" in done.stderr


def test_several_documents_in_one_file(tmp_path: Path):
    path = tmp_path / "both.yaml"
    path.write_text(SCENARIO + "---\n" + FIXTURE)
    ids = [c.case.id for c in load_paths([path])]
    assert ids == ["lifecycle/tiny", "dimensions/temporal/tiny"]


def test_missing_path_and_empty_folder(tmp_path: Path):
    done = run_cli_here("suites", "validate", str(tmp_path / "nope"))
    assert done.returncode == 2 and "no such file or folder" in done.stderr
    done = run_cli_here("suites", "validate", str(tmp_path))
    assert done.returncode == 2 and "holds no .yaml file" in done.stderr


def test_unknown_suite_name():
    done = run_cli_here("suites", "list", "--suite", "lifecycel")
    assert done.returncode == 2
    assert "unknown suite `lifecycel`" in done.stderr
    assert "Traceback" not in done.stderr
