"""A benchmark's figures by category, read from the JSON reports of `memeval run`.

Run: `python benchmarks/locomo_report.py REPORT.json [REPORT.json ...]`, one report per engine
(e.g. `memeval run --suite locomo:PATH --engine bm25 --json bm25.json`). For every
`category:` tag it prints, over the probes of the recall phase: evidence recall (the share of
a probe's evidence ids found in its pack, averaged), all evidence (the share of probes with
every evidence id in the pack, as the `evidence_recall` KPI counts), evidence MRR, and for the
probes with an answer the containment (`extractive_answer`) and token F1 of the extractive
answer; for the abstention probes, the share the engine abstained on. A markdown table, ready
for the README.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

CATEGORIES = ("multi-hop", "temporal", "open-domain", "single-hop", "adversarial")


def figures(probes: list[dict[str, Any]]) -> dict[str, float | None]:
    with_evidence = [p for p in probes if p["evidence"]]
    answered = [p for p in probes if not p["abstain"]]
    abstaining = [p for p in probes if p["abstain"]]

    def mean(values: list[float]) -> float | None:
        return statistics.fmean(values) if values else None

    return {
        "n": len(probes),
        "recall": mean([len(p["evidence_found"]) / len(p["evidence"]) for p in with_evidence]),
        "all": mean([float(set(p["evidence"]) <= set(p["evidence_found"])) for p in with_evidence]),
        "mrr": mean([1 / p["evidence_rank"] if p["evidence_rank"] else 0.0 for p in with_evidence]),
        "contain": mean([float(bool(p["extractive_ok"])) for p in answered]),
        "f1": mean([p["extractive_f1"] or 0.0 for p in answered]),
        "abstain": mean([float(bool(p["abstained"])) for p in abstaining]),
    }


def by_category(report: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for case in report["cases"]:
        for probe in case["probes"]:
            if probe["phase"] != "recall":
                continue
            groups["overall"].append(probe)
            for tag in probe["tags"]:
                if tag.startswith("category:"):
                    groups[tag.removeprefix("category:")].append(probe)
    return {name: figures(probes) for name, probes in groups.items()}


def cell(value: float | None, share: bool = True) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.1f}%" if share else f"{value:.3f}"


def main(paths: list[Path]) -> None:
    reports = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    head = ["category", "n", "engine", "evidence recall", "all evidence", "evidence MRR"]
    head += ["containment", "F1", "abstained"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    tables = [(r["engine"], by_category(r)) for r in reports]
    for name in ("overall", *CATEGORIES):
        for engine, table in tables:
            row = table.get(name)
            if row is None:
                continue
            print(
                f"| {name} | {row['n']} | {engine} | {cell(row['recall'])} | {cell(row['all'])} | "
                f"{cell(row['mrr'], share=False)} | {cell(row['contain'])} | "
                f"{cell(row['f1'], share=False)} | {cell(row['abstain'])} |"
            )


if __name__ == "__main__":
    main([Path(a) for a in sys.argv[1:]])
