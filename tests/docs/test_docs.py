"""The documentation holds up: the site builds with no warning, every Python block runs, and
every `memeval` command line in a shell block is a command memeval still has, with options it
still takes.

A command line is checked by handing it to the real command group with `--help` appended:
click parses every argument before it acts on `--help`, so a renamed command or a removed
option fails here, while placeholders such as `RUN_ID` or `PATH` need no real run. The shell
blocks are run for real by `test_docs_run.py`; the README's Python example by a test of its own.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from click.testing import CliRunner

from memeval.cli import app
from memeval.suites.loader import load_file
from tests.docs.blocks import fenced, parse_note

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")])


def blocks(page: Path, language: str) -> list[tuple[int, str, bool]]:
    """Each block's line, its text, and whether a `docs-run: skip (reason)` note before it
    asks for it not to run (a Python block that needs a key, a fleet or a cluster)."""
    return [
        (line, body, any(d.verb == "skip" for d in parse_note(note or "", f"{page.name}:{line}")))
        for found, line, body, note in fenced(page.read_text(encoding="utf-8"))
        if found == language
    ]


def command_lines(block: str) -> list[str]:
    """The `memeval ...` lines of a shell block, joined over backslash continuations, with
    trailing comments, pipes, redirections and background markers cut off."""
    joined = block.replace("\\\n", " ")
    lines = []
    for raw in joined.splitlines():
        line = raw.strip()
        for cut in (" # ", " | ", " > ", " && ", " & ", " 2>"):
            line = line.split(cut, 1)[0]
        line = line.removesuffix(" &").strip()
        for prefix in ("pip install . && ", "pip install '.[test]' && "):
            line = line.removeprefix(prefix)
        if line.startswith("memeval "):
            lines.append(line)
    return lines


SHELL_COMMANDS = [
    pytest.param(line, id=f"{page.name}:{start}:{line[:60]}")
    for page in PAGES
    for start, block, _ in blocks(page, "bash")
    for line in command_lines(block)
]


def test_the_docs_name_memeval_commands() -> None:
    assert len(SHELL_COMMANDS) >= 30, "the shell blocks were not read"


@pytest.mark.parametrize("line", SHELL_COMMANDS)
def test_every_documented_command_line_parses(line: str) -> None:
    argv = shlex.split(line)[1:]
    if "--" in argv:  # what follows goes to Celery or Flower, not to memeval
        argv = argv[: argv.index("--")]
    group = typer.main.get_command(app)
    result = CliRunner().invoke(group, [*argv, "--help"], catch_exceptions=False)
    assert result.exit_code == 0, f"`{line}` no longer parses:\n{result.output}"


PYTHON_BLOCKS = [
    pytest.param(page, start, code, id=f"{page.name}:{start}")
    for page in PAGES
    if page.name != "README.md"  # tests/api/test_readme_example.py runs the README's
    for start, code, skipped in blocks(page, "python")
    if not skipped
]


@pytest.mark.parametrize(("page", "start", "code"), PYTHON_BLOCKS)
def test_every_python_block_runs(page: Path, start: int, code: str, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, f"{page.name}:{start} failed:\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr


def test_the_site_builds_with_no_warning(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "architecture" / "index.html").exists()


CASE_BLOCKS = [
    pytest.param(page, start, text, id=f"{page.name}:{start}")
    for page in PAGES
    for start, text, _ in blocks(page, "yaml")
    if text.startswith("kind: ")
]


def test_the_docs_show_whole_cases() -> None:
    assert CASE_BLOCKS, "the YAML examples were not read"


@pytest.mark.parametrize(("page", "start", "text"), CASE_BLOCKS)
def test_every_whole_case_in_the_docs_loads(
    page: Path, start: int, text: str, tmp_path: Path
) -> None:
    """A case shown whole must load as written, exactly as `memeval suites validate` reads it."""
    path = tmp_path / "case.yaml"
    path.write_text(text, encoding="utf-8")
    (located,) = load_file(path)
    assert located.case.id
