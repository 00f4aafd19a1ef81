"""`memeval serve --latency-ms`: every request waits the given time, and waiting requests
overlap, as they would at a remote engine (the farm's latency benchmark depends on both)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from pydantic import SecretStr

from memeval.engines.naive import NaiveEngine
from memeval.engines.types import MemoryItem
from memeval.server import create_app
from tests.adapters.conftest import TOKEN, engine_at, run
from tests.adapters.fakes import running
from tests.adapters.test_serve_cli import _free_port

ROOT = Path(__file__).resolve().parents[2]
DELAY = 0.2


def test_every_call_waits_and_waiting_calls_overlap(http_env: None) -> None:
    with running(create_app(NaiveEngine(), SecretStr(TOKEN), latency_s=DELAY)) as url:
        engine = engine_at("http", url)

        async def go() -> tuple[float, float, list[str]]:
            start = time.perf_counter()
            await engine.ingest("t1", MemoryItem(id="m0", text="the kettle is blue"))
            one = time.perf_counter() - start
            start = time.perf_counter()
            items = [MemoryItem(id=f"m{i}", text=f"fact {i}") for i in range(1, 21)]
            await asyncio.gather(*(engine.ingest("t1", item) for item in items))
            many = time.perf_counter() - start
            ids = await engine.list("t1")
            await engine.close()
            return one, many, ids

        one, many, ids = run(go())
    assert one >= DELAY
    assert many >= DELAY
    assert many < 20 * DELAY / 2, f"20 delayed calls took {many:.2f}s: they ran one by one"
    assert len(ids) == 21


def test_serve_cli_passes_the_latency_on(tmp_path: Path) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEVAL_")}
    env["MEMEVAL_SERVE_TOKEN"] = TOKEN
    argv = [sys.executable, "-m", "memeval", "serve", "--engine", "naive", "--port", str(port)]
    with (tmp_path / "serve.log").open("w") as log:
        proc = subprocess.Popen([*argv, "--latency-ms", "300"], env=env, stdout=log,
                                stderr=subprocess.STDOUT, cwd=ROOT)  # fmt: skip
    try:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        deadline = time.monotonic() + 30
        while True:
            try:
                start = time.perf_counter()
                answer = httpx.get(f"http://127.0.0.1:{port}/v1/engine", headers=headers)
                took = time.perf_counter() - start
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, (
                    tmp_path / "serve.log"
                ).read_text()
                time.sleep(0.1)
        assert answer.status_code == 200
        assert took >= 0.3
        assert "300 ms per request" in (tmp_path / "serve.log").read_text()
    finally:
        proc.terminate()
        proc.wait(20)


def test_a_negative_latency_is_refused() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEVAL_")}
    done = subprocess.run(
        [sys.executable, "-m", "memeval", "serve", "--latency-ms", "-5", "--token", "x"],
        env=env, capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "latency-ms" in done.stderr
    assert "Traceback" not in done.stderr
