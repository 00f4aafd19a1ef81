"""How long a user waits for `memeval run` with nothing set up: the full default suite on the
reference engine, on the embedded farm (its own Redis and worker node, started and stopped by
the command), reports written, end to end.

Run from the repository root: `python -m benchmarks.embedded_wall [--repeat 3]`. Every
`MEMEVAL_*` variable of the caller is dropped, so the farm is embedded; the store and reports
go to a temporary folder. Prints each wall time, then min and median; the target is under
10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.engines import ROOT, bench_env

TARGET = 10.0
TIMEOUT = 120.0


def once(folder: Path, index: int) -> float:
    """One `memeval run`, in its own process group so a hung run takes its farm down too."""
    env = bench_env(MEMEVAL_DATABASE_URL=f"sqlite:///{folder / f'run{index}.db'}")
    argv = [sys.executable, "-m", "memeval", "run", "--out", str(folder / f"out{index}")]
    log = folder / f"run{index}.log"
    with log.open("wb") as handle:
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            sys.exit(f"`memeval run` took over {TIMEOUT:g}s:\n{log.read_text()[-2000:]}")
        wall = time.perf_counter() - started
    if code != 0:
        sys.exit(f"`memeval run` exited {code}:\n{log.read_text()[-2000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memeval-bench-") as tmp:
        walls = [once(Path(tmp), i) for i in range(args.repeat)]
    print(f"memeval run (all suites, reference engine, embedded, {os.cpu_count()} CPUs)")
    print("runs    " + "  ".join(f"{wall:.2f}" for wall in walls) + " s")
    median = statistics.median(walls)
    verdict = "ok" if median < TARGET else "MISS"
    print(f"min {min(walls):.2f} s  median {median:.2f} s  target < {TARGET:g} s  {verdict}")


if __name__ == "__main__":
    main()
