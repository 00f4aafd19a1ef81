"""Suite files as an attacker would write them: terminal escape sequences in their text, and
links to files outside the folder a user hands to memeval."""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli_here import run_cli_here
from tests.conftest import run_cli
from tests.suites.test_broken_files import SCENARIO

ESC = "\\e]0;pwned\\a\\e[2J\\e[31m"  # retitle the terminal, clear it, paint it red


def test_escape_sequences_from_a_suite_never_reach_report_md_raw(tmp_path: Path) -> None:
    hostile = SCENARIO.replace(
        "    question: Where does the staging database live?",
        f'    question: "Where does the staging database live?{ESC}"',
    ).replace("expect: [ap-south-1]", "expect: [eu-west-9]")  # a miss, so the question is quoted
    (tmp_path / "case.yaml").write_text(hostile, encoding="utf-8")
    done = run_cli(
        "run", "--in-process", "--engine", "naive", "--suite", str(tmp_path / "case.yaml"),
        "--out", str(tmp_path / "out"), cwd=tmp_path,
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path}/s.db"},
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "\x1b" not in md and "\x07" not in md
    assert "live?\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31m" in md, md


def test_a_file_linked_from_outside_the_suite_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.yaml").write_text(SCENARIO, encoding="utf-8")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "own.yaml").write_text(SCENARIO.replace("name: tiny", "name: own"), encoding="utf-8")
    os.symlink(outside / "secret.yaml", suite / "linked.yaml")
    done = run_cli_here("suites", "validate", str(suite))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "linked.yaml" in done.stderr and "outside the suite folder" in done.stderr
    assert "fix:" in done.stderr and "Traceback" not in done.stderr
    (suite / "linked.yaml").unlink()
    assert run_cli_here("suites", "validate", str(suite)).returncode == 0
