"""Every command block of the README and of docs/*.md runs as written, on this install.

Each page is typed into one bash in a fresh working folder that reads as a clone
(`tests/docs/terminal.py`), every statement of every ```bash, ```sh and ```console block in
order, each with a timeout. A statement fails the page when it exits non-zero or prints a
Python traceback, unless a `docs-run:` note beside its block documents it (`tests/docs/blocks.py`
lists the notes: skip, exit N, background, slow, each with its reason). Blocks noted `slow`
run as a second test id per page, only with `MEMEVAL_DOCS_SLOW=1` (skipped, saying so,
otherwise). `pip install` lines are checked as already satisfied, not run.

CONTRIBUTING.md's blocks (lint, type-check, the whole test suite) are what CI runs already.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from tests.docs.blocks import Block, NoteError, parse_note, shell_blocks
from tests.docs.pip_check import missing
from tests.docs.terminal import ROOT, clone_view, run_page, steps, uses_ports

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PAGE_SECONDS = 300.0
SLOW = os.environ.get("MEMEVAL_DOCS_SLOW") == "1"


def blocks_of(page: Path) -> list[Block]:
    return shell_blocks(page.name, page.read_text(encoding="utf-8"))


def _noted(page: Path) -> list[Block]:
    try:
        return blocks_of(page)
    except (NoteError, AssertionError):  # test_every_note_is_understood says what
        return []


def _param(page: Path, suffix: str = ""):
    """A page that starts servers runs on the one worker that holds the docs' fixed ports."""
    serves = uses_ports(steps(_noted(page), slow=bool(suffix))[0])
    marks = [pytest.mark.xdist_group("docs-fixed-ports")] if serves else []
    return pytest.param(page, id=page.name + suffix, marks=marks)


FAST = [_param(page) for page in PAGES]
SLOW_PAGES = [
    _param(page, "-slow")
    for page in PAGES
    if any(d.verb == "slow" for b in _noted(page) for d in b.directives)
]


@pytest.fixture
def reader(tmp_path: Path) -> Path:
    """A fresh working folder that reads as a clone of the checkout."""
    return clone_view(tmp_path / "memeval")


def _run(page: Path, reader: Path, slow: bool) -> None:
    outcome = run_page(blocks_of(page), reader, timeout=PAGE_SECONDS, slow=slow)
    assert not outcome.failures, "\n\n".join(str(f) for f in outcome.failures)
    print(f"{page.name}: {len(outcome.ran)} commands in {outcome.seconds:.1f} s;",
          f"slowest: {outcome.slowest}; not run: {outcome.not_run}")  # fmt: skip


@pytest.mark.farm
@pytest.mark.timeout(3 * PAGE_SECONDS)  # other checkouts' pages may hold the ports first
@pytest.mark.parametrize("page", FAST)
def test_every_command_block_runs(page: Path, reader: Path) -> None:
    _run(page, reader, slow=False)


@pytest.mark.farm
@pytest.mark.timeout(4 * 3600)
@pytest.mark.parametrize("page", SLOW_PAGES)
def test_every_slow_block_runs(page: Path, reader: Path) -> None:
    if not SLOW:
        pytest.skip(f"{page.name} has blocks noted slow: MEMEVAL_DOCS_SLOW=1 runs them")
    _run(page, reader, slow=True)


def test_every_note_is_understood() -> None:
    """A note without a reason, an unknown verb or a command matching nothing fails here."""
    problems = []
    for page in PAGES:
        try:
            for block in blocks_of(page):
                block.plan()
        except NoteError as exc:
            problems.append(str(exc))
    assert not problems, "\n".join(problems)
    assert sum(len(b.statements) for p in PAGES for b in blocks_of(p)) >= 80


# ---- the runner itself, on pages written for it -------------------------------------------


def page_of(tmp_path: Path, markdown: str) -> list[Block]:
    return shell_blocks("page.md", markdown)


def outcome_of(tmp_path: Path, markdown: str):
    folder = tmp_path / "work"
    folder.mkdir(parents=True)
    return run_page(page_of(tmp_path, markdown), folder, timeout=120)


def test_a_failing_command_fails_its_page_unless_its_note_says_so(tmp_path: Path) -> None:
    block = "```bash\nmemeval --version\nmemeval suites validate nowhere/\nmemeval kpis\n```\n"
    bare = outcome_of(tmp_path / "a", block)
    assert [(f.where, f.command) for f in bare.failures] == [
        ("page.md:3", "memeval suites validate nowhere/")
    ]
    assert "exited with status 2" in bare.failures[0].reason
    assert len(bare.ran) == 3
    noted = f"<!-- docs-run: exit 2 `memeval suites validate` (absent on purpose) -->\n{block}"
    assert outcome_of(tmp_path / "b", noted).failures == []
    wrong = "<!-- docs-run: exit 2 (meant to fail) -->\n```bash\nmemeval --version\n```\n"
    (failure,) = outcome_of(tmp_path / "c", wrong).failures
    assert "status 0, where the page's note expects 2" in failure.reason


def test_a_failure_inside_a_loop_or_a_chain_is_caught(tmp_path: Path) -> None:
    loop = "```bash\nfor e in nope fine; do\n  test $e = fine\ndone\necho after\n```\n"
    (failure,) = outcome_of(tmp_path / "a", loop).failures  # the last round passes
    assert failure.command == "for e in nope fine; do test $e = fine done"
    chain = "```bash\ntrue && false && true\necho never\n```\n"
    run = outcome_of(tmp_path / "b", chain)
    assert [f.command for f in run.failures] == ["true && false && true"]
    assert "never" not in (tmp_path / "b" / "page.log").read_text()


def test_a_traceback_fails_even_with_exit_zero(tmp_path: Path) -> None:
    code = "import traceback\\ntry: 1/0\\nexcept ZeroDivisionError: traceback.print_exc()"
    (failure,) = outcome_of(tmp_path, f"```sh\npython -c \"exec('{code}')\"\n```\n").failures
    assert failure.reason == "printed a traceback" and "ZeroDivisionError" in failure.output


def test_a_background_server_is_waited_for_then_stopped(tmp_path: Path) -> None:
    markdown = (
        "<!-- docs-run: background `python -m http.server` (serves until stopped) -->\n"
        "```bash\npython -m http.server 0 --bind 127.0.0.1\necho $! > server.pid\n```\n\n"
        "```bash\ncurl -sf http://127.0.0.1:$(python -c 'import psutil,sys; print(next(c.laddr"
        '.port for c in psutil.Process(int(open("server.pid").read())).net_connections()))\')/ '
        "> listing.html\n```\n"
    )
    run = outcome_of(tmp_path, markdown)
    assert run.failures == []
    assert "Directory listing" in (tmp_path / "work" / "listing.html").read_text()
    pid = int((tmp_path / "work" / "server.pid").read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_background_command_that_never_listens_fails(tmp_path: Path) -> None:
    (failure,) = outcome_of(tmp_path, "```bash\nmemeval --version &\n```\n").failures
    assert "never listened" in failure.reason and "exited before it listened" in failure.output


def test_a_command_past_the_timeout_fails_and_is_stopped(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    blocks = page_of(tmp_path, "```bash\nsleep 30 & echo $! > sleeper.pid; wait\n```\n")
    (failure,) = run_page(blocks, folder, timeout=2).failures
    assert "did not finish within the page's 2 s" in failure.reason
    assert not psutil.pid_exists(int((folder / "sleeper.pid").read_text()))


def test_skipped_and_slow_commands_are_listed_not_run(tmp_path: Path) -> None:
    markdown = (
        "<!-- docs-run:\nskip `touch skipped` (a reason)\nslow `touch slow` (another)\n-->\n"
        "```bash\ntouch skipped\ntouch slow\ntouch ran\n```\n"
    )
    run = outcome_of(tmp_path, markdown)
    assert [n.split(" ", 1)[1] for n in run.not_run] == [
        "skip (a reason): touch skipped",
        "slow (another): touch slow",
    ]
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["ran"]


@pytest.mark.parametrize(
    "note",
    ["skip", "skip ()", "exit `memeval` (no status)", "skip 2 (a status)", "wait (unknown verb)"],
)
def test_a_note_without_a_reason_or_a_known_verb_is_refused(note: str) -> None:
    with pytest.raises(NoteError):
        parse_note(note, "page.md:1")


def test_a_note_naming_no_command_is_refused(tmp_path: Path) -> None:
    (block,) = page_of(tmp_path, "<!-- docs-run: skip `nope` (gone) -->\n```bash\ntrue\n```\n")
    with pytest.raises(NoteError, match="`nope` names no command"):
        block.plan()


def test_pip_lines_are_checked_against_this_install() -> None:
    assert missing(".") == [] and missing(".[test]") == [] and missing("memeval[mem0]") == []
    assert missing("memeval[no-such-extra]") == ["memeval has no extra `no-such-extra`"]
    assert missing("no-such-distribution-here") == ["no-such-distribution-here"]
    assert missing("memeval>=999") == ["memeval>=999"]
