"""The embedded node is stopped as soon as its pool processes are past their shutdown hooks:
not before (an engine's close removes its folder), and not a second later (billiard sleeps a
second in every exiting pool process, which every `memeval run` used to wait through)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from memeval_farm.children import busy_children
from tests.farm.conftest import Farm, stat


def test_every_pool_process_closes_its_engines_before_the_node_is_stopped(farm: Farm) -> None:
    done = farm.run("run", "--engine", "tests.farm.engines:SlowClose", "--dimension",
                    "abstention", "--workers", "2", "--out", str(farm.tmp / "out"))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    writers = {p.name.split("-")[0] for p in farm.marks.iterdir() if p.name[0].isdigit()}
    closed = {p.name.removeprefix("closed-") for p in farm.marks.glob("closed-*")}
    assert writers and writers <= closed  # each process that ran a case closed its engine


def test_a_child_is_busy_until_it_marks_itself_or_dies(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c",
         "import subprocess, sys, time\n"
         "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
         "print(child.pid, flush=True)\n"
         "sys.stdin.readline(); child.kill()\n"  # a zombie: this process never waits for it
         "time.sleep(30)"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        child = parent.stdout.readline().strip()  # type: ignore[union-attr]
        assert busy_children(parent.pid, tmp_path)
        (tmp_path / child).touch()
        assert not busy_children(parent.pid, tmp_path)
        (tmp_path / child).unlink()
        parent.stdin.write("kill\n")  # type: ignore[union-attr]
        parent.stdin.flush()  # type: ignore[union-attr]
        deadline = time.monotonic() + 10
        while stat(child)[0] != "Z":  # killed, and left unreaped
            assert time.monotonic() < deadline, f"child {child} never became a zombie"
            time.sleep(0.02)
        assert not busy_children(parent.pid, tmp_path)
    finally:
        parent.kill()
        parent.wait()
