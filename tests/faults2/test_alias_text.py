"""Aliases are bounded by the text they stand for, not only by how many values: a file of a
few long anchored strings repeated by alias stood for hundreds of megabytes and validated."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest

from memeval.errors import SuiteError
from memeval.suites.loader import MAX_FILE_BYTES, MAX_TEXT, MAX_VALUES, load_file
from tests.conftest import run_cli
from tests.suites.test_broken_files import FIXTURE

LONG = "x" * 50_000
AMPLIFIED = FIXTURE.replace("kind: fixture", f"kind: fixture\nanchor: &long {LONG}", 1).replace(
    "queries:", "padding: [" + ", ".join(["*long"] * 200) + "]\nqueries:", 1
)
"""About 51 KB that stands for 10 MB of text, with a few hundred values."""


def test_a_file_standing_for_too_much_text_is_refused_at_once(tmp_path: Path) -> None:
    assert len(AMPLIFIED) < MAX_FILE_BYTES and MAX_VALUES > 200
    path = tmp_path / "amplified.yaml"
    path.write_text(AMPLIFIED, encoding="utf-8")
    start = time.process_time()
    with pytest.raises(SuiteError) as caught:
        load_file(path)
    assert time.process_time() - start < 0.5, "refusing took too long"
    said = caught.value.render()
    assert said.startswith(str(path)) and f"{MAX_TEXT:,} characters" in said, said
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    done = run_cli("suites", "validate", str(path), cwd=tmp_path)
    assert done.returncode == 2 and "amplified.yaml" in done.stderr and "fix:" in done.stderr
    assert "Traceback" not in done.stderr
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before < 10


def test_aliases_within_the_bound_still_load(tmp_path: Path) -> None:
    fine = AMPLIFIED.replace(", ".join(["*long"] * 200), ", ".join(["*long"] * 10))
    path = tmp_path / "fine.yaml"
    path.write_text(fine, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:  # loads, then meets the unknown fields
        load_file(path)
    assert "characters" not in caught.value.render()
