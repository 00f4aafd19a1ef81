"""A `memeval` command in a process of its own, and that process's peak resident memory: what
the streaming tests compare between a generated benchmark file and one five times its size."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from benchmarks.scale_run import WRAPPER


def peak_mb(
    folder: Path, *args: str, env: Mapping[str, str] | None = None
) -> tuple[int, subprocess.CompletedProcess[str]]:
    """`memeval ARGS` run in `folder` (made here), with none of the caller's `MEMEVAL_`
    settings: its peak resident MB (its own `VmHWM` at exit, which covers its last moments), and
    the finished process, checked for success."""
    folder.mkdir()
    peak = folder / "peak"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMEVAL_")}
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(peak), *args],
        cwd=folder,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return int(peak.read_text()), done
