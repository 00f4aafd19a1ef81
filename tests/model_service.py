"""`memeval models serve --port 0` started as a user starts it, for the tests that need the
stand-in models behind a real socket."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def model_service() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The service's URL (from the first line it prints, once it listens) and the process,
    whose next lines a test may read."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memeval", "models", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/v1", line)
        assert match, f"no URL in {line!r}"
        yield match.group(0), proc
    finally:
        proc.terminate()
        proc.wait(10)
