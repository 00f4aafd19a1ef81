"""How each lifecycle KPI moves as the haystack grows: the built-in scenarios with every tenant
padded by `noise:` distractors to 0, 1k, 10k (and, with --sizes, 100k) writes.

A scenario's tenant holds a few dozen writes, so any engine's first items fit its pack and pack
hit barely separates engines; in a haystack it must. Cases run in this process, one at a time,
on the engine named (embedded engines only: the point is the engine, not the wire).

    python benchmarks/haystack.py                        # naive and reference, 0 / 1k / 10k
    python benchmarks/haystack.py --sizes 0,1000,100000 --engines reference
"""

from __future__ import annotations

import argparse
import asyncio
import time

from memeval.engines.registry import create
from memeval.results import CaseResult
from memeval.runner import run_case
from memeval.scoring.kpis import kpis
from memeval.suites.catalog import resolve
from memeval.suites.scenario import Noise, Scenario

SHOWN = (
    "pack_hit",
    "paraphrase_pack_hit",
    "mrr",
    "extractive_answer",
    "extractive_f1",
    "fresh_first",
    "leaks",
    "pack_tokens",
    "pre_turn_p50",
    "probe_p50",
)


async def measure(engine_name: str, size: int, seed: int) -> tuple[dict[str, float | None], float]:
    scenarios = resolve("lifecycle").scenarios
    results: list[CaseResult] = []
    started = time.perf_counter()
    for scenario in scenarios:
        padded: Scenario = scenario
        if size:
            padded = scenario.model_copy(update={"noise": Noise(items=size, seed=seed)})
        engine = create(engine_name)
        try:
            results.append(await run_case(padded, engine, run_id=f"haystack-{size}"))
        finally:
            await engine.close()
    wall = time.perf_counter() - started
    return {k.name: k.value for k in kpis(results)}, wall


def cell(name: str, value: float | None) -> str:
    if value is None:
        return "–"
    if name in ("mrr", "extractive_f1"):
        return f"{value:.3f}"
    if name.endswith(("_p50", "tokens")):
        return f"{value:.1f}"
    return f"{100 * value:.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="naive,reference")
    parser.add_argument("--sizes", default="0,1000,10000")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    header = ["engine", "items", *SHOWN, "wall s"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for engine in engines:
        for size in sizes:
            values, wall = asyncio.run(measure(engine, size, args.seed))
            cells = [cell(n, values.get(n)) for n in SHOWN]
            print(f"| {engine} | {size:,} | " + " | ".join(cells) + f" | {wall:.1f} |", flush=True)


if __name__ == "__main__":
    main()
