"""The built-in suite on reference, bm25, naive, mem0-oss and graphiti, the last two over the
stand-in models: a results table and the engine's time per call.

Starts `memeval models serve --port 0`, then runs `memeval run --engine E --workers W` for each
engine on the embedded farm (mem0-oss and graphiti pointed at the service through
MEM0_OSS_URL and GRAPHITI_URL), and reads each run's JSON report: the composite, each
dimension, the lifecycle KPIs, the run's wall time, and p50 / p95 of every engine call the
runner timed (`store`, `query`, `post_turn`, ...) over all cases.

The stand-in models make no engine smarter than its own retrieval, so the figures for
mem0-oss and graphiti measure their wiring and latency, not their quality: point MEM0_OSS_URL
and GRAPHITI_URL (or `?url=`) at vLLM, Ollama or OpenRouter for that.

Run from the repository root:
`python -m benchmarks.oss_engines [--suite all] [--workers 2] [--engines reference,...]`.
Exits 1 when a run fails or a case errors.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.engines import ROOT
from memeval.models import NOTE

ENGINES = ("reference", "bm25", "naive", "mem0-oss", "graphiti")
MODEL_URL_ENV = {"mem0-oss": "MEM0_OSS_URL", "graphiti": "GRAPHITI_URL", "langmem": "LANGMEM_URL"}
FARM_ENV = ("MEMEVAL_BROKER_URL", "MEMEVAL_DATABASE_URL")
DIMENSIONS = ("temporal", "conflict", "multihop", "abstention", "provenance")
KPIS = ("pack_hit", "paraphrase_pack_hit", "fresh_first", "leaks")


@contextmanager
def model_service() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memeval", "models", "serve", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        match = re.search(r"http://\S+/v1", proc.stdout.readline())  # type: ignore[union-attr]
        if match is None:
            raise RuntimeError("memeval models serve printed no URL")
        yield match.group(0)
    finally:
        proc.terminate()
        proc.wait(10)


def run(engine: str, url: str, folder: Path, suite: str, workers: int) -> tuple[dict, float]:
    env = {k: v for k, v in os.environ.items() if k not in FARM_ENV}
    if engine in MODEL_URL_ENV:
        env[MODEL_URL_ENV[engine]] = url
    report = folder / f"{engine}.json"
    argv = [
        sys.executable, "-m", "memeval", "run", "--engine", engine, "--suite", suite,
        "--workers", str(workers), "--label", engine, "--out", str(folder / engine),
        "--json", str(report),
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(
            f"{engine}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return json.loads(report.read_text()), wall


def pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def kpi(report: dict, name: str) -> float | None:
    return next((k["value"] for k in report["kpis"] if k["name"] == name), None)


def call_times(report: dict) -> dict[str, list[float]]:
    times: dict[str, list[float]] = defaultdict(list)
    for case in report["cases"]:
        for timing in case["timings"]:
            times[timing["call"]].append(timing["ms"])
    return times


def quantile(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="all")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--engines", default=",".join(ENGINES))
    args = parser.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    print(f"note: {NOTE}")
    reports: dict[str, tuple[dict, float]] = {}
    with tempfile.TemporaryDirectory(prefix="oss-engines-") as tmp, model_service() as url:
        for engine in engines:
            reports[engine] = run(engine, url, Path(tmp), args.suite, args.workers)
            print(f"ran {engine} in {reports[engine][1]:.0f} s", flush=True)
    failed = 0
    print(f"\n`python -m benchmarks.oss_engines --suite {args.suite} --workers {args.workers}`\n")
    head = ["engine", "composite", *DIMENSIONS, *KPIS, "errored", "wall"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for engine, (report, wall) in reports.items():
        errored = sum(1 for c in report["cases"] if c["status"] != "done" or c["error"])
        failed += errored
        dims = [pct(report["dimensions"].get(d)) for d in DIMENSIONS]
        kpis = [pct(kpi(report, name)) for name in KPIS]
        row = [engine, pct(report["composite"]), *dims, *kpis, str(errored), f"{wall:.0f} s"]
        print("| " + " | ".join(row) + " |")
    print("\nengine time per call, ms (p50 / p95, n):\n")
    calls = sorted({call for r, _ in reports.values() for call in call_times(r)})
    print("| call | " + " | ".join(reports) + " |")
    print("|---|" + "---|" * len(reports))
    for call in calls:
        cells = []
        for report, _ in reports.values():
            values = call_times(report).get(call)
            cells.append(
                f"{quantile(values, 0.5):.1f} / {quantile(values, 0.95):.1f} ({len(values)})"
                if values
                else "–"
            )
        print(f"| {call} | " + " | ".join(cells) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
