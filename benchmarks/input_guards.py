"""What the security guards cost, and how fast they refuse.

Run: `python benchmarks/input_guards.py`. Prints
- masking: `redact_model` on a real case result (the first lifecycle scenario run on the
  reference engine), clean and with a key in its error, per call;
- an alias bomb ("billion laughs", under 2 KB): time for the loader to refuse it;
- the largest file the loader accepts (just under 1 MB of assertions): time to load it.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memeval.engines.registry import create
from memeval.errors import SuiteError
from memeval.results import CaseResult
from memeval.runner import run_case
from memeval.secrets import redact_model
from memeval.suites.catalog import resolve
from memeval.suites.loader import MAX_FILE_BYTES, load_file

KEY = "zq-benchmark-key-0123456789"


def per_call(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds per call over five rounds of `repeat` calls."""
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        rounds.append((time.perf_counter() - start) / repeat)
    return statistics.median(rounds)


async def a_case_result() -> CaseResult:
    engine = create("reference")
    try:
        return await run_case(resolve("lifecycle").cases[0].case, engine, run_id="bench")
    finally:
        await engine.close()


def masking() -> None:
    os.environ["MEMEVAL_BENCH_API_KEY"] = KEY
    clean = asyncio.run(a_case_result())
    dirty = clean.model_copy(update={"error": f"answerer: 401 (Authorization: Bearer {KEY})"})
    size = len(clean.model_dump_json())
    for label, result in (("clean", clean), ("with a key", dirty)):
        seconds = per_call(lambda r=result: redact_model(r), 200)
        print(f"redact_model, {label:10} case result ({size:,} B of JSON): {seconds * 1e6:8.0f} µs")


def bomb(folder: Path) -> None:
    laughs = ", ".join(['"lol"'] * 9)
    text = (
        "kind: fixture\nlol0: &a0 ["
        + laughs
        + "]\n"
        + "".join(f"lol{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))
    )
    path = folder / "laughs.yaml"
    path.write_text(text)

    def refuse() -> None:
        try:
            load_file(path)
        except SuiteError:
            return
        raise AssertionError("the bomb was accepted")

    seconds = per_call(refuse, 20)
    print(f"alias bomb ({len(text):,} B, 9^10 values): refused in {seconds * 1e3:.1f} ms")


def largest(folder: Path) -> None:
    rows, n = [], 0
    head = "kind: fixture\ndimension: temporal\nname: big\ntitle: Big\ntests: size\nassertions:\n"
    tail = "queries:\n- text: What does item 7 cost?\n  checks: [{contains: '7 dollars'}]\n"
    while True:
        row = f"- {{id: a{n}, text: Item {n} costs {n} dollars, source: s}}\n"
        if len(head) + sum(map(len, rows)) + len(row) + len(tail) > MAX_FILE_BYTES:
            break
        rows.append(row)
        n += 1
    path = folder / "big.yaml"
    path.write_text(head + "".join(rows) + tail)
    seconds = per_call(lambda: load_file(path), 1)
    print(f"largest accepted file ({path.stat().st_size:,} B, {n:,} assertions): {seconds:.2f} s")


if __name__ == "__main__":
    masking()
    with tempfile.TemporaryDirectory() as tmp:
        bomb(Path(tmp))
        largest(Path(tmp))
