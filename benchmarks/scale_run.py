"""What a run of a large benchmark file costs, process by process, on the embedded farm.

    python -m benchmarks.scale_run /tmp/lme-s.json --engine reference
    python -m benchmarks.scale_run /tmp/lme-m.json --engine reference --limit 20
    python -m benchmarks.scale_run /tmp/lme-m.json --plan-only

A run is `memeval run --suite longmemeval:FILE` as a user types it, in a folder of its own
(SQLite store, reports). While it runs, every process under it is sampled twice a second for
its peak resident memory (`VmHWM` in /proc), named by its place in the tree: the dispatcher
(`memeval run`), the Redis server, the worker node and each of its pool children. The
dispatcher also reports its own peak when it exits (`VmHWM`), which covers its last
moments. CPU is what the whole tree used (`RUSAGE_CHILDREN`). `--plan-only` times the
dispatcher's planning pass alone (`plan_new`: the one read of the file that records the run
and its plan), for a file too large to run whole here.

The load average is printed beside every figure: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import NamedTuple

OWN_PEAK = """
def own_peak_mb():
    import re
    status = open("/proc/self/status").read()
    return int(re.search(r"VmHWM:\\s+(\\d+)", status).group(1)) // 1024
"""
"""A child script's own peak resident MB: `VmHWM`, which starts afresh at exec, where
`ru_maxrss` keeps the resident size of the process it was forked from (a test's pytest, larger
than a small command's own peak)."""
WRAPPER = (
    OWN_PEAK
    + """
import atexit, sys
from pathlib import Path
out = Path(sys.argv[1])
atexit.register(lambda: out.write_text(str(own_peak_mb())))
sys.argv = ["memeval", *sys.argv[2:]]
from memeval.cli import main
main()
"""
)
"""`memeval ARGS`, writing its peak resident MB to the file `argv[1]` as it exits."""
PLAN = (
    OWN_PEAK
    + """
import io, sys, time
from rich.console import Console
from memeval.evaluation.planning import RunRequest, plan_new
from memeval.evaluation.store import usable_store
store = usable_store(sys.argv[1])
began = time.monotonic()
planned = plan_new(store, RunRequest(suite=sys.argv[2]), Console(file=io.StringIO()))
took = time.monotonic() - began
print(len(planned.todo), round(took, 1), own_peak_mb())
"""
)


class Proc(NamedTuple):
    pid: int
    ppid: int
    cmd: str
    cpu: float
    """Seconds of CPU so far, user and system."""


TICK = os.sysconf("SC_CLK_TCK")


def _procs() -> dict[int, Proc]:
    found: dict[int, Proc] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / TICK
        found[int(entry)] = Proc(int(entry), int(fields[1]), cmd, cpu)
    return found


def _hwm_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class Sampler(threading.Thread):
    """Every process under `root`, by role, with the highest peak seen for it."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peaks: dict[int, tuple[str, float]] = {}
        self.cpu: dict[int, float] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(0.5)

    def sample(self) -> None:
        procs = _procs()
        children: dict[int, list[int]] = {}
        for proc in procs.values():
            children.setdefault(proc.ppid, []).append(proc.pid)
        depth = {self.root: 0}
        todo = [self.root]
        while todo:
            pid = todo.pop()
            for child in children.get(pid, []):
                depth[child] = depth[pid] + 1
                todo.append(child)
        for pid, level in depth.items():
            peak = _hwm_mb(pid)
            if peak is None or pid not in procs:
                continue
            cmd = procs[pid].cmd
            role = (
                "dispatcher"
                if level == 0
                else "redis-server"
                if "redis" in cmd and level == 1
                else "redis-server's fork (append-only file rewrite; shares its pages)"
                if "redis" in cmd
                else "worker node"
                if level == 1
                else "worker child"
            )
            self.peaks[pid] = (role, max(peak, self.peaks.get(pid, ("", 0.0))[1]))
            self.cpu[pid] = procs[pid].cpu


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def run(path: Path, engine: str, limit: int | None, workers: int, folder: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEVAL_")}
    env["MEMEVAL_DATABASE_URL"] = f"sqlite:///{folder / 'runs.db'}"
    for name in ("MEMEVAL_DISPATCH_WINDOW",):
        if name in os.environ:
            env[name] = os.environ[name]
    peak_file = folder / "dispatcher-peak"
    cmd = [sys.executable, "-c", WRAPPER, str(peak_file), "run", "--suite"]
    cmd += [f"longmemeval:{path}", "--engine", engine, "--workers", str(workers)]
    cmd += ["--out", str(folder / "out"), *(["--limit", str(limit)] if limit else [])]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before, began = _load(), time.monotonic()
    with (folder / "run.log").open("w") as log:
        proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
        sampler = Sampler(proc.pid)
        sampler.start()
        code = proc.wait()
        sampler.done.set()
        sampler.join()
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"## {path.name}, engine {engine}" + (f", --limit {limit}" if limit else ""))
    print(f"exit {code}; log {folder / 'run.log'}")
    print(f"load average (1/5/15 min) before {load_before}, after {_load()}")
    sampled = sum(sampler.cpu.values())
    print(
        f"wall {wall:.1f} s, CPU {sampled:.1f} s (every process of the farm, from /proc; "
        f"{cpu:.1f} s of it in processes reaped by their parents)"
    )
    own = peak_file.read_text() if peak_file.exists() else "?"
    print(f"peak resident memory, dispatcher (its own VmHWM at exit): {own} MB")
    forks = [peak for role, peak in sampler.peaks.values() if "fork" in role]
    for pid, (role, peak) in sorted(sampler.peaks.items(), key=lambda p: p[1][0]):
        if "fork" not in role:
            used = sampler.cpu.get(pid, 0.0)
            print(f"peak resident memory, {role} (pid {pid}): {peak:.0f} MB; CPU {used:.1f} s")
    if forks:
        print(
            f"redis-server forked {len(forks)} times to rewrite its append-only file, "
            f"each peaking at {max(forks):.0f} MB at most, most of it shared with the server"
        )
    report_path = folder / "out" / "report.json"
    if report_path.exists():
        report = json.loads(report_path.read_text())
        done = sum(c["status"] == "done" for c in report["cases"])
        print(f"cases: {done} done of {len(report['cases'])}, {len(report['missing'])} missing")
    store = sum(f.stat().st_size for f in folder.glob("runs.db*"))
    print(f"results store (SQLite): {store / 1e6:.1f} MB")
    for name in ("report.json", "report.html", "report.md"):
        target = folder / "out" / name
        if target.exists():
            print(f"{name}: {target.stat().st_size / 1e6:.1f} MB")


def plan_only(path: Path, folder: Path) -> None:
    load_before = _load()
    done = subprocess.run(
        [sys.executable, "-c", PLAN, f"sqlite:///{folder / 'runs.db'}", f"longmemeval:{path}"],
        capture_output=True,
        text=True,
        check=True,
    )
    cases, took, peak = done.stdout.split()
    size = path.stat().st_size / 1e6
    print(f"## planning pass over {path.name} ({size:,.0f} MB)")
    print(f"load average (1/5/15 min) before {load_before}, after {_load()}")
    print(f"{cases} cases planned in {took} s; dispatcher peak resident memory {peak} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="a LongMemEval-shaped JSON file")
    parser.add_argument("--engine", default="reference")
    parser.add_argument("--limit", type=int, default=None, help="run the first N cases only")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--plan-only", action="store_true", help="time the planning pass only")
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep the run in")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="scale-run-"))
    folder.mkdir(parents=True, exist_ok=True)
    if args.plan_only:
        plan_only(args.file.resolve(), folder)
    else:
        run(args.file.resolve(), args.engine, args.limit, args.workers, folder)


if __name__ == "__main__":
    main()
