"""`memeval models serve` answers with MiniLM vectors and reaches nothing but 127.0.0.1 to do it
(its weights come from the on-disk cache, filled before the probe starts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.embeddings import weights

PROBE = Path(__file__).with_name("offline_probe.py")


def test_served_embeddings_reproduce_the_pair_with_no_connection_out():
    weights.ensure()
    done = subprocess.run(
        [sys.executable, str(PROBE)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["cosine"] == pytest.approx(0.755, abs=0.01)
    assert weights.MODEL in found["models"]
    assert any(s.startswith("connect") for s in found["seen"])  # the hook sees the client
    assert [s for s in found["seen"] if "'127.0.0.1'" not in s] == []
