"""The issue's done-when, as a user would do it: `memeval serve --engine reference` in one
process, `memeval run --engine http --url ...` on the embedded farm in another, and the
report matches the embedded reference engine's, case by case."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.adapters.conftest import TOKEN

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMEVAL_")}
    clean.pop("PYTHONPATH", None)
    return {
        **clean,
        "PYTHONPATH": str(ROOT),
        "MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'memeval.db'}",
        "MEMEVAL_QUIET_AFTER": "1",
        "MEMEVAL_POLL_INTERVAL": "0.2",
        "COLUMNS": "200",
    }


@pytest.fixture
def server(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "memeval", "serve", "--engine", "reference", "--port", str(port)],
        env={**env, "MEMEVAL_SERVE_TOKEN": TOKEN},
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{url}/openapi.json", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail(f"memeval serve did not start:\n{(tmp_path / 'serve.log').read_text()}")
        time.sleep(0.1)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(20)


def memeval(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memeval", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_served_reference_engine_reproduces_the_embedded_scores(server, env, tmp_path):
    cases = ("arr_derivation_chain", "churn_rate_source", "isolation", "compaction", "learnings")
    picked = ["--suite", "all", "--workers", "2", *(f"--only={c}" for c in cases)]
    over_http = memeval(
        {**env, "MEMEVAL_HTTP_TOKEN": TOKEN},
        "run", "--engine", "http", "--url", server, "--label", "served",
        "--out", str(tmp_path / "served"), *picked,
    )  # fmt: skip
    assert over_http.returncode == 0, over_http.stdout + over_http.stderr
    embedded = memeval(
        env, "run", "--engine", "reference", "--label", "embedded",
        "--out", str(tmp_path / "embedded"), *picked,
    )  # fmt: skip
    assert embedded.returncode == 0, embedded.stdout + embedded.stderr

    def scores(folder: str) -> dict[str, object]:
        report = json.loads((tmp_path / folder / "report.json").read_text())
        return {
            "composite": report["composite"],
            "cases": sorted((c["case_id"], c["status"], c["score"]) for c in report["cases"]),
        }

    served, local = scores("served"), scores("embedded")
    assert served == local
    assert len(served["cases"]) == len(cases)


def test_serve_refuses_to_start_without_a_token(env):
    refused = memeval(env, "serve", "--engine", "reference")
    assert refused.returncode == 2
    assert "MEMEVAL_SERVE_TOKEN" in refused.stderr


def test_run_checks_the_http_engine_before_the_run_exists(env):
    no_token = memeval(env, "run", "--engine", "http", "--url", "http://127.0.0.1:9")
    assert no_token.returncode == 2 and "MEMEVAL_HTTP_TOKEN" in no_token.stderr
    bad_url = memeval({**env, "MEMEVAL_HTTP_TOKEN": TOKEN}, "run", "--engine", "http", "--url", "x")
    assert bad_url.returncode == 2 and "not an http(s) URL" in bad_url.stderr
