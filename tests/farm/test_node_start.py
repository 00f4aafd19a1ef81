"""How the embedded node starts: forked from a `memeval run` that has one thread (the imports
it shares are most of a node's start-up), a fresh interpreter from a process with more."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.farm.conftest import Farm, children, private_farm, wait_for
from tests.farm.engines import SLOW
from workers.children import NODE_NAME
from workers.embedded import EmbeddedFarm


def _read(pid: int, name: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes().strip()
    except OSError:
        return b""


def test_memeval_run_forks_its_node(farm: Farm) -> None:
    farm.env["MEMEVAL_TEST_DELAY"] = "0.3"
    run = farm.start("run", "--engine", SLOW, "--dimension", "abstention", "--workers", "1",
                     "--out", str(farm.tmp / "out"))  # fmt: skip
    try:
        wait_for(farm.has_results, 60, "a result")
        nodes = [p for p in children(run.pid) if _read(p, "comm") == NODE_NAME.encode()]
        assert nodes  # the node and its pool, none with an interpreter of its own:
        assert {_read(p, "cmdline") for p in nodes} == {_read(run.pid, "cmdline")}
    finally:
        run.kill()
        run.wait()


def test_a_process_with_threads_starts_its_node_afresh(tmp_path: Path) -> None:
    gate = threading.Event()
    other = threading.Thread(target=gate.wait)
    other.start()
    try:
        with EmbeddedFarm(workers=1, pool="threads", env=private_farm(tmp_path).env) as embedded:
            embedded.start_workers()
            node = embedded.pid
            assert node is not None
            wait_for(lambda: _read(node, "comm") == NODE_NAME.encode(), 30, "the node's name")
            assert b"-m\x00workers.node\x00threads" in _read(node, "cmdline")
    finally:
        gate.set()
        other.join()
