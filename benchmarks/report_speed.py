"""How long a report's numbers take to compute: the bootstrap intervals of a LoCoMo-sized run,
and `memeval compare` of two full built-in runs, end to end.

Run from the repository root: `python -m benchmarks.report_speed [--repeat 3] [--runs A B]`.
The intervals are drawn over a synthetic run of `--cases` scenario cases holding `--probes`
probes in all (LoCoMo's dev5 file: 5 conversations, about 2,000 probes). Without `--runs`,
two built-in runs are made first with `memeval run --in-process` into a temporary folder (a
minute of setup, not timed). Prints wall and CPU seconds of each repeat, then the median;
the target for `compare` is under 3 s.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.engines import ROOT, bench_env
from memeval.report.intervals import run_intervals
from memeval.results import CaseResult, CaseStatus, Phase, ProbeResult, RunReport, Timing
from memeval.summary import build_report

COMPARE_TARGET = 3.0
CATEGORIES = ("multi-hop", "temporal", "open-domain", "single-hop", "adversarial")


def synthetic_run(cases: int, probes: int, seed: int = 1) -> RunReport:
    """Scenario cases shaped like an imported benchmark: tagged probes citing evidence writes,
    hits and ranks drawn at random, a timing per probe."""
    rng = random.Random(seed)
    per_case = max(1, probes // cases)
    results = []
    for c in range(cases):
        found = []
        for i in range(per_case):
            hit = rng.random() < 0.6
            evidence = [f"w{i}", f"w{i + 1}"]
            found.append(
                ProbeResult(
                    probe=f"p{i}",
                    phase=Phase.recall,
                    via="ask",
                    style="lexical" if i % 2 else "paraphrase",
                    scored=True,
                    question=f"question {i}?",
                    expect=[f"answer {i}"],
                    pack=f"- answer {i}" if hit else "- something else",
                    pack_tokens=rng.randint(50, 400),
                    hit=hit,
                    rank=rng.randint(1, 5) if hit else None,
                    extractive_ok=hit and rng.random() < 0.7,
                    extractive_f1=rng.random(),
                    tags=[f"category:{CATEGORIES[i % len(CATEGORIES)]}"],
                    evidence=evidence,
                    evidence_found=evidence[: rng.randint(0, 2)],
                    evidence_rank=rng.randint(1, 8) if hit else None,
                )
            )
        results.append(
            CaseResult(
                run_id="bench",
                case_id=f"lifecycle/conv-{c}",
                kind="scenario",
                engine="reference",
                tenant=f"t{c}",
                status=CaseStatus.done,
                score=sum(p.hit for p in found) / len(found),
                probes=found,
                timings=[
                    Timing(step="probe", call="pre_turn", ms=rng.uniform(5, 30)) for _ in found
                ],
            )
        )
    return build_report(
        run_id="bench",
        label="bench",
        engine="reference",
        suite="synthetic",
        started_at=datetime.now(UTC),
        finished_at=datetime.now(UTC),
        cases=results,
        planned=[],
    )


def timed(action: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def memeval(argv: list[str], folder: Path) -> tuple[float, float]:
    """One `memeval` command in a child process: its wall and CPU seconds."""
    env = bench_env(MEMEVAL_DATABASE_URL=f"sqlite:///{folder / 'bench.db'}")
    cpu, wall = child_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memeval", *argv],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    wall, cpu = time.perf_counter() - wall, child_cpu() - cpu
    if done.returncode != 0:
        sys.exit(f"`memeval {' '.join(argv)}` exited {done.returncode}:\n{done.stderr[-2000:]}")
    return wall, cpu


def show(name: str, figures: list[tuple[float, float]], target: float | None = None) -> None:
    walls = [w for w, _ in figures]
    cpus = [c for _, c in figures]
    each = "  ".join(f"{w:.2f}/{c:.2f}" for w, c in figures)
    median = statistics.median(walls)
    line = f"{name}: wall/cpu {each} s; median wall {median:.2f} s"
    line += f", cpu {statistics.median(cpus):.2f} s"
    if target is not None:
        line += f"  target < {target:g} s {'ok' if median < target else 'MISS'}"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", type=int, default=5)
    parser.add_argument("--probes", type=int, default=2000)
    parser.add_argument("--runs", nargs=2, type=Path, metavar=("A", "B"))
    args = parser.parse_args()

    report = synthetic_run(args.cases, args.probes)
    probes = sum(len(c.probes) for c in report.cases)
    show(
        f"bootstrap intervals, {len(report.cases)} cases / {probes} probes",
        [timed(lambda: run_intervals(report)) for _ in range(args.repeat)],
    )

    with tempfile.TemporaryDirectory(prefix="memeval-bench-") as tmp:
        folder = Path(tmp)
        runs = args.runs
        if runs is None:
            runs = [folder / "a", folder / "b"]
            for out in runs:
                memeval(["run", "--in-process", "--label", out.name, "--out", str(out)], folder)
        show(
            "memeval compare of two full built-in runs",
            [memeval(["compare", *map(str, runs)], folder) for _ in range(args.repeat)],
            COMPARE_TARGET,
        )


if __name__ == "__main__":
    main()
