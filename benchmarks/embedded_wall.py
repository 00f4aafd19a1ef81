"""How long a user waits for `memeval run` with nothing set up: the full default suite on the
reference engine, on the embedded farm (its own Redis and worker node, started and stopped by
the command), reports written, end to end.

Run from the repository root: `python -m benchmarks.embedded_wall [--repeat 3]`. Every
`MEMEVAL_*` variable of the caller is dropped, so the farm is embedded; the store and reports
go to a temporary folder. Prints each wall time and the CPU seconds of the command and its
farm (Redis, worker node and pool), then min and median; on a shared machine the CPU figure
is the steadier one. The target is under 5 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.engines import ROOT, bench_env

TARGET = 5.0
TIMEOUT = 120.0


def child_cpu() -> float:
    """CPU seconds of every finished child, and of the children they waited for in turn."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def once(folder: Path, index: int) -> tuple[float, float]:
    """One `memeval run`, in its own process group so a hung run takes its farm down too."""
    env = bench_env(MEMEVAL_DATABASE_URL=f"sqlite:///{folder / f'run{index}.db'}")
    argv = [sys.executable, "-m", "memeval", "run", "--out", str(folder / f"out{index}")]
    log = folder / f"run{index}.log"
    with log.open("wb") as handle:
        cpu, started = child_cpu(), time.perf_counter()
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
        wall, cpu = time.perf_counter() - started, child_cpu() - cpu
    if code != 0:
        sys.exit(f"`memeval run` exited {code}:\n{log.read_text()[-2000:]}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memeval-bench-") as tmp:
        figures = [once(Path(tmp), i) for i in range(args.repeat)]
    walls = [wall for wall, _ in figures]
    print(f"memeval run (all suites, reference engine, embedded, {os.cpu_count()} CPUs)")
    print("runs    " + "  ".join(f"{wall:.2f}" for wall in walls) + " s wall")
    print("        " + "  ".join(f"{cpu:.2f}" for _, cpu in figures) + " s CPU")
    median = statistics.median(walls)
    verdict = "ok" if median < TARGET else "MISS"
    cpu = statistics.median(cpu for _, cpu in figures)
    print(
        f"min {min(walls):.2f} s  median {median:.2f} s (CPU {cpu:.2f} s)  "
        f"target < {TARGET:g} s  {verdict}"
    )


if __name__ == "__main__":
    main()
