"""`benchmarks.retrieval_locomo` keeps what finished when a conversation's process dies, and
refuses a file it cannot read in one line."""

from __future__ import annotations

import asyncio
import copy
import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from benchmarks import locomo_recall, retrieval_locomo
from benchmarks.locomo_recall import Tally, measure
from memeval.engines.registry import create
from memeval.importers import locomo
from tests.benchmarks.samples import LOCOMO, write

ROOT = Path(__file__).resolve().parents[2]
CRASHING = "tests.benchmarks.crashing:CrashingEngine"


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "benchmarks.retrieval_locomo", *args]


def environment(crash_dir: Path | None, tmp: Path | None) -> dict[str, str]:
    env = {**os.environ, "LOCOMO_CRASH_DIR": str(crash_dir or ROOT)}
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    return env


def run(
    *args: str, crash_dir: Path | None = None, tmp: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args),
        cwd=ROOT,
        env=environment(crash_dir, tmp),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def three(tmp_path: Path) -> Path:
    """The sample conversation three times over, under three ids."""
    samples = []
    for conv_id in ("conv-a", "conv-b", "conv-c"):
        sample = copy.deepcopy(LOCOMO[0])
        sample["sample_id"] = conv_id
        samples.append(sample)
    return write(tmp_path, "three.json", samples)


def expected_lines(path: Path, ids: set[str]) -> list[str]:
    """The sums of plain bm25 over those conversations, scored in this process."""
    tallies: dict[str, Tally] = defaultdict(Tally)

    async def go() -> None:
        for conv in locomo.read(path):
            if conv.id in ids:
                engine = create("bm25")
                await measure(engine, conv, tallies)
                await engine.close()

    asyncio.run(go())
    return ["  " + tally.line(key) for key, tally in tallies.items()]


def test_a_crashed_conversation_is_reported_retried_and_left_out(three: Path, tmp_path: Path):
    crash = tmp_path / "crash"
    crash.mkdir()
    (crash / "bench-conv-a.always").touch()  # dies on both tries
    (crash / "bench-conv-b.once").touch()  # dies once, then runs through
    done = run(str(three), "--engines", CRASHING, "--isolate", crash_dir=crash)
    out = done.stdout.splitlines()
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert out.count("  conv-a: crashed (signal 11 (SIGSEGV)) on try 1; running it once more") == 1
    assert "  conv-a: crashed (signal 11 (SIGSEGV)) on try 2; left out of the sums" in out
    assert "  conv-b: crashed (signal 11 (SIGSEGV)) on try 1; running it once more" in out
    assert not any(line.startswith("  conv-b: crashed") and "try 2" in line for line in out)
    assert "  crashed: conv-a (signal 11 (SIGSEGV), signal 11 (SIGSEGV)), not counted" in out
    assert "  sums over 2 of 3 conversations" in out
    sums = out[out.index("  sums over 2 of 3 conversations") + 1 :]
    for line in expected_lines(three, {"conv-b", "conv-c"}):
        assert line in sums, (line, out)
    # each survivor's tally was printed as it finished, before the sums
    finished = [line for line in out if line.startswith(("  conv-b (", "  conv-c ("))]
    assert len(finished) == 2 and out.index(finished[1]) < out.index(sums[0]) - 1


def test_in_one_process_a_crash_takes_the_run_down(three: Path, tmp_path: Path):
    """What `--isolate` is for: without it the first crash ends everything, no sums printed."""
    crash = tmp_path / "crash"
    crash.mkdir()
    (crash / "bench-conv-b.always").touch()
    done = run(str(three), "--engines", CRASHING, "--no-isolate", crash_dir=crash)
    assert done.returncode == -11
    assert any(line.startswith("  conv-a (") for line in done.stdout.splitlines())
    assert "sums over" not in done.stdout


def test_a_crashed_child_leaves_nothing_in_the_temporary_folder(three: Path, tmp_path: Path):
    crash, tmp = tmp_path / "crash", tmp_path / "tmp"
    crash.mkdir()
    tmp.mkdir()
    (crash / "bench-conv-a.always").touch()
    done = run(str(three), "--engines", CRASHING, "--isolate", crash_dir=crash, tmp=tmp)
    assert done.returncode == 1, done.stderr
    left = Path((crash / "bench-conv-a.left").read_text(encoding="utf-8"))
    assert left.is_relative_to(tmp)  # the engine did write under the run's temporary folder
    assert not left.parent.exists()
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize("group", [False, True], ids=["to-the-parent", "to-the-group"])
def test_ctrl_c_stops_the_children_and_keeps_what_finished(
    three: Path, tmp_path: Path, group: bool
):
    """A terminal's Ctrl-C reaches the whole process group, the child too; `kill -INT` the
    parent alone."""
    crash, tmp = tmp_path / "crash", tmp_path / "tmp"
    crash.mkdir()
    tmp.mkdir()
    (crash / "bench-conv-b.slow").touch()  # a minute asleep: the run is interrupted in it
    child = subprocess.Popen(
        command(str(three), "--engines", CRASHING, "--isolate"),
        cwd=ROOT,
        env=environment(crash, tmp),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=group,
    )
    assert child.stdout is not None
    seen = []
    for line in child.stdout:
        seen.append(line.rstrip("\n"))
        if line.startswith("  conv-a ("):
            break
    if group:
        os.killpg(child.pid, signal.SIGINT)
    else:
        child.send_signal(signal.SIGINT)
    # the slow child holds the same stdout: reaching its end in seconds means it was stopped
    rest, err = child.communicate(timeout=30)
    out = seen + rest.splitlines()
    assert child.returncode == 130, err
    assert err == ""
    assert out[-1] == "  interrupted: 1 of 3 conversations finished (conv-a)"
    assert any(line.startswith("  conv-a (") for line in out)
    assert "sums over" not in rest
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize("name", ["missing.json", "not-json.json"])
def test_a_file_it_cannot_read_is_one_line_naming_it(tmp_path: Path, name: str):
    path = tmp_path / name
    if name == "not-json.json":
        path.write_text("{oops", encoding="utf-8")
    done = run(str(path), "--engines", "bm25")
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and str(path) in line and "fix: " in line


def test_an_unknown_sample_id_is_named(three: Path):
    done = run(str(three), "--engines", "bm25", "--only", "conv-a,conv-z")
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {three} has no conv-z; fix: name its sample ids"


def test_a_missing_default_file_says_which_and_how_to_give_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """In a git worktree the default, beside the checkout, does not exist."""
    absent = tmp_path / "shared/benchmarks/locomo/locomo-dev5.json"
    monkeypatch.setattr(locomo_recall, "DEFAULT", absent)
    monkeypatch.setattr(sys, "argv", ["retrieval_locomo", "--engines", "bm25"])
    with pytest.raises(SystemExit) as ended:
        retrieval_locomo.main()
    assert ended.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: ") and str(absent) in line
    assert "as the first argument" in line
