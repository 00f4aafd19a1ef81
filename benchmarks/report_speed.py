"""How long a report's numbers take to compute: the bootstrap intervals of a LoCoMo-sized run,
and `memeval compare` of two full built-in runs, end to end; with `--html`, how large a run's
reports are and how fast its HTML opens in headless Chromium.

Run from the repository root: `python -m benchmarks.report_speed [--repeat 3] [--runs A B]`,
or `python -m benchmarks.report_speed --html 66 500 5000`.
The intervals are drawn over a synthetic run of `--cases` scenario cases holding `--probes`
probes in all (LoCoMo's dev5 file: 5 conversations, about 2,000 probes). Without `--runs`,
two built-in runs are made first with `memeval run --in-process` into a temporary folder (a
minute of setup, not timed). Prints wall and CPU seconds of each repeat, then the median;
the target for `compare` is under 3 s.

`--html N...` writes the three reports (through `write_reports`, as a run does) of a synthetic
run of N LongMemEval-shaped cases: two probes a case, recall and synthesis, each holding a full
1,500-token pack, every third case an abstention question that misses. Then, for each, the
file sizes, the write time, and the opening of report.html, of the heaviest case page and of
the one-file page (`memeval report --format html` on stdout) in Chromium: the page's own
figure from the start of navigation to drawn (`data-rendered-ms`), and the wall of a
screenshot less that of a blank page (load, layout and paint). The target is under 2 s.
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.engines import ROOT, bench_env
from benchmarks.longmemeval_gen import WORDS
from memeval.report import Format, render_as, write_reports
from memeval.report.html import pages_folder
from memeval.report.intervals import run_intervals
from memeval.results import CaseResult, CaseStatus, Phase, ProbeResult, RunReport, Timing
from memeval.summary import build_report

COMPARE_TARGET = 3.0
OPEN_TARGET = 2.0
PACK_WORDS = 800  # a 1,500-token pack of LongMemEval-S's word salad: about 5,200 characters
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
        timings = [Timing(step="probe", call="pre_turn", ms=rng.uniform(5, 30)) for _ in found]
        results.append(scenario(f"conv-{c}", c, found, timings))
    return bench_report(results, "synthetic")


def scenario(name: str, n: int, probes: list[ProbeResult], timings: list[Timing]) -> CaseResult:
    """A done scenario case of the bench run, scored as its probes hit."""
    return CaseResult(
        run_id="bench",
        case_id=f"lifecycle/{name}",
        kind="scenario",
        engine="reference",
        tenant=f"t{n}",
        status=CaseStatus.done,
        score=sum(p.hit for p in probes) / len(probes),
        probes=probes,
        timings=timings,
    )


def bench_report(cases: list[CaseResult], suite: str) -> RunReport:
    now = datetime.now(UTC)
    return build_report(
        run_id="bench",
        label="bench",
        engine="reference",
        suite=suite,
        started_at=now,
        finished_at=now,
        cases=cases,
        planned=[],
    )


def longmemeval_run(cases: int, seed: int = 1) -> RunReport:
    """Cases shaped like `longmemeval:` imports of an S-sized file as `reference` scores them:
    each its own scenario, a question asked after ingest and again after synthesis, over a
    pack filled to the budget. A report's size follows cases and packs, not the haystack: the
    pack is capped at 1,500 tokens however long the history (checked: a 500-case run of
    2 sessions x 4 turns and one of 8 x 10 wrote HTML reports within 0.1% of each other)."""
    rng = random.Random(seed)
    results = []
    for c in range(cases):
        abstain = c % 3 == 2
        pack = "\n".join(
            f"- 2023-06-17 14:0{line} user: " + " ".join(rng.choices(WORDS, k=PACK_WORDS // 4))
            for line in range(4)
        )
        probes = [
            ProbeResult(
                probe="q",
                phase=phase,
                via="ask",
                style="paraphrase",
                scored=True,
                question="What is my locker code?",
                expect=[] if abstain else [str(1000 + c)],
                abstain=abstain,
                pack=pack if abstain else f"- my locker code is {1000 + c}\n{pack}",
                pack_tokens=1290,
                hit=not abstain,
                rank=None if abstain else 1,
                tags=[f"category:{'abstention' if abstain else 'single-session-user'}"],
                evidence=[] if abstain else [f"gen_{c}_s0.0"],
                evidence_found=[] if abstain else [f"gen_{c}_s0.0"],
                evidence_rank=None if abstain else 1,
            )
            for phase in (Phase.recall, Phase.synthesis)
        ]
        timing = Timing(step="probe", call="pre_turn", ms=rng.uniform(0.3, 2))
        results.append(
            scenario(f"longmemeval-gen_{c}{'_abs' if abstain else ''}", c, probes, [timing] * 2)
        )
    return bench_report(results, "longmemeval:generated")


def chromium_wall(page: Path, profile: Path, *args: str) -> tuple[float, str]:
    """One headless Chromium start on `page`, a fresh profile each: its wall and its stdout."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("headless Chromium is required: apt-get install -y chromium")
    shutil.rmtree(profile, ignore_errors=True)
    flags = "--headless --no-sandbox --disable-gpu --disable-background-networking "
    flags += "--disable-component-update --no-first-run"
    wall = time.perf_counter()
    done = subprocess.run(
        [browser, *flags.split(), f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=300,
    )
    wall = time.perf_counter() - wall
    if done.returncode != 0 or "Uncaught" in done.stderr:
        sys.exit(f"chromium failed on {page}:\n{done.stderr[-2000:]}")
    return wall, done.stdout


def opening(page: Path, folder: Path, blank: float, repeat: int) -> str:
    """How long `page` takes to open: the page's own figure and the screenshot's extra wall."""
    drawn, painted = [], []
    for _ in range(repeat):
        _, dom = chromium_wall(page, folder / "profile", "--dump-dom")
        found = re.search(r'data-rendered-ms="(\d+)"', dom)
        if found is None:
            sys.exit(f"{page} was never drawn")
        drawn.append(int(found.group(1)) / 1000)
        shot = folder / "shot.png"
        wall, _ = chromium_wall(
            page, folder / "profile", f"--screenshot={shot}", "--window-size=1280,2000"
        )
        painted.append(wall - blank)
    worst = max(statistics.median(drawn), statistics.median(painted))
    verdict = "ok" if worst < OPEN_TARGET else "MISS"
    return (
        f"drawn {statistics.median(drawn):.2f} s, painted {statistics.median(painted):.2f} s "
        f"(median of {repeat}; target < {OPEN_TARGET:g} s {verdict})"
    )


def mb(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.2f} MB"


def html_sizes(sizes: list[int], repeat: int) -> None:
    """Each size's reports: write time, file sizes, and the HTML pages opening in Chromium."""
    with tempfile.TemporaryDirectory(prefix="memeval-html-") as tmp:
        folder = Path(tmp)
        blank_page = folder / "blank.html"
        blank_page.write_text("<!doctype html><title>blank</title><p>blank</p>")
        blank = statistics.median(
            chromium_wall(blank_page, folder / "profile", f"--screenshot={folder / 'b.png'}")[0]
            for _ in range(3)
        )
        print(f"chromium: a blank page's screenshot takes {blank:.2f} s wall (subtracted)")
        for cases in sizes:
            report = longmemeval_run(cases)
            out = folder / f"run-{cases}"
            wall, cpu = timed(lambda: write_reports(report, out))  # noqa: B023
            pages = sorted(pages_folder(out / "report.html").glob("*.html"))
            one = out / "one-file.html"
            one.write_text(render_as(report, Format.html), encoding="utf-8")
            probes = sum(len(c.probes) for c in report.cases)
            print(
                f"{cases} cases / {probes} probes: write_reports {wall:.2f} s wall, {cpu:.2f} s CPU"
            )
            print(
                f"  report.json {mb(out / 'report.json')}, report.md {mb(out / 'report.md')}, "
                f"report.html {mb(out / 'report.html')}, "
                f"{len(pages)} case pages {sum(p.stat().st_size for p in pages) / 1e6:.2f} MB "
                f"(largest {max((p.stat().st_size for p in pages), default=0) / 1e6:.2f} MB), "
                f"one-file page {mb(one)}"
            )
            print(f"  report.html opens: {opening(out / 'report.html', folder, blank, repeat)}")
            if pages:
                heaviest = max(pages, key=lambda p: p.stat().st_size)
                print(
                    f"  case page {heaviest.name} opens: {opening(heaviest, folder, blank, repeat)}"
                )
            print(f"  one-file page opens: {opening(one, folder, blank, repeat)}")


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
    parser.add_argument(
        "--html", nargs="+", type=int, metavar="CASES", help="time the reports of these sizes"
    )
    args = parser.parse_args()
    if args.html:
        html_sizes(args.html, args.repeat)
        return

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
