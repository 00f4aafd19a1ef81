"""The viewer follows a `memeval run --detach` as a fleet worker lands its cases: the page fills
in live from the store, then shows the run finished, with nobody waiting on the run itself."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx

from tests.farm.conftest import Farm, stop, wait_for
from tests.farm.engines import SLOW
from tests.viewer.cdp import browser


def test_a_detached_run_fills_in_live_in_the_browser(shared: Farm, tmp_path: Path) -> None:
    port = _free_port()
    shared.env["MEMEVAL_TEST_DELAY"] = "0.3"  # each write waits: the cases land over seconds
    shared.env["MEMEVAL_STATE_DIR"] = str(tmp_path / "state")
    viewer = shared.start("view", "--port", str(port), log="view.log")
    url = f"http://127.0.0.1:{port}"
    worker = None
    try:
        wait_for(lambda: _answers(url), 60, "the viewer to answer")
        detached = shared.run("run", "--detach", "--engine", SLOW, "--dimension", "temporal")
        assert detached.returncode == 0, detached.stdout + detached.stderr
        run_id = detached.stdout.split()[-1]
        with browser(tmp_path / "profile") as page:
            page.go(f"{url}/runs/{run_id}")
            assert page.read("document.getElementById('landed').textContent") == "0 of 10"
            worker = shared.start("worker", "--concurrency", "1", log="worker.log")
            seen = set()
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                landed = page.read("document.getElementById('landed')?.textContent") or ""
                seen.add(landed)
                if page.read("document.getElementById('status')?.textContent") == "finished":
                    break
                time.sleep(0.2)
            assert page.read("document.getElementById('status').textContent") == "finished"
            partial = {s for s in seen if s not in ("0 of 10", "10 of 10")}
            assert partial, f"the page never showed the run part-way: {sorted(seen)}"
            assert page.read("document.querySelectorAll('#cases tbody tr').length") == 10
            assert page.problems == []
    finally:
        if worker is not None:
            stop(worker)
        stop(viewer)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/api/runs", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
