"""A process with more than one thread starts the embedded node as a fresh interpreter; a
`memeval run`, which has one, forks it (`test_embedded`'s test of a run killed outright)."""

from __future__ import annotations

import threading
from pathlib import Path

from memeval_farm.children import NODE_NAME
from memeval_farm.embedded import EmbeddedFarm
from tests.farm.conftest import private_farm, proc_file, process_name, wait_for


def test_a_process_with_threads_starts_its_node_afresh(tmp_path: Path) -> None:
    gate = threading.Event()
    other = threading.Thread(target=gate.wait)
    other.start()
    try:
        with EmbeddedFarm(workers=1, pool="threads", env=private_farm(tmp_path).env) as embedded:
            embedded.start_workers()
            node = embedded.pid
            assert node is not None
            wait_for(lambda: process_name(node) == NODE_NAME, 30, "the node's name")
            assert b"-m\x00memeval_farm.node\x00threads" in proc_file(node, "cmdline")
    finally:
        gate.set()
        other.join()
