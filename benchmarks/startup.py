"""How long a user waits for each `memeval` command: the quick ones (help, version, runs,
engines, status), a whole `memeval run` on the embedded farm, and `compare` of two runs.

Run from the repository root: `python -m benchmarks.startup [--repeat 5]`. Every `MEMEVAL_*`
variable of the caller is dropped, so the farm is embedded, and the store and reports go to a
temporary folder. `status` reads a `--suite dimensions` run made first (not timed); `compare`
reads the reports of the first two timed full runs. Prints each repeat's wall and CPU seconds
(the command and every child it waited for) and their medians; on a shared machine the CPU
figure is the steadier one. Targets (issue 16, 2 cores): help and runs under 0.5 s, a full run
under 5 s, compare under 3 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.embedded_wall import TARGET as RUN_TARGET
from benchmarks.embedded_wall import once as full_run
from benchmarks.engines import ROOT, bench_env
from benchmarks.report_speed import COMPARE_TARGET, memeval, show

QUICK_TARGET = 0.5


def newest_run(folder: Path) -> str:
    """The id of the newest run in the benchmark's store (`memeval()` uses folder/bench.db)."""
    listed = subprocess.run(
        [sys.executable, "-m", "memeval", "runs", "--json", "--limit", "1"],
        cwd=ROOT,
        env=bench_env(MEMEVAL_DATABASE_URL=f"sqlite:///{folder / 'bench.db'}"),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(listed.stdout)[0]["id"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (median)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    n = args.repeat
    with tempfile.TemporaryDirectory(prefix="memeval-bench-") as tmp:
        folder = Path(tmp)
        dims = ["run", "--suite", "dimensions", "--in-process", "--out", str(folder / "dims")]
        memeval(dims, folder)
        run_id = newest_run(folder)
        quick = {
            "memeval --help": (["--help"], QUICK_TARGET),
            "memeval --version": (["--version"], None),
            "memeval runs": (["runs"], QUICK_TARGET),
            "memeval engines": (["engines"], None),
            "memeval status RUN": (["status", run_id], None),
        }
        for name, (argv, target) in quick.items():
            show(name, [memeval(argv, folder) for _ in range(n)], target)
        runs = [full_run(folder, i) for i in range(n)]
        show("memeval run (all suites, reference, embedded)", runs, RUN_TARGET)
        if n < 2:
            full_run(folder, 1)  # compare needs two runs; this one is not timed
        outs = [str(folder / "out0"), str(folder / "out1")]
        compares = [memeval(["compare", *outs], folder) for _ in range(n)]
        show("memeval compare of two full runs", compares, COMPARE_TARGET)


if __name__ == "__main__":
    main()
