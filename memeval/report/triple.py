"""The line each run summary and comparison leads with: answer accuracy, probe latency p50 and
mean context tokens per probe, then the three numbers that separate engines.

Accuracy alone hides a pack that holds the whole tenant: an engine that returns everything
answers as well as the one that recalls, at many times the tokens. The three together say
what an answer cost in time and context. Without a model, the accuracy shown is the best
deterministic proxy (the extractive answer: the pack unit closest to the question, graded
like a model's answer) and the line says so.
"""

from __future__ import annotations

from pydantic import BaseModel

from memeval.report.numbers import DASH, pct
from memeval.results import Kpi

ACCURACY = ("judge_answer", "model_answer", "extractive_answer")
"""Most to least trusted: a judge's verdict, a model's graded answer, the extractive proxy."""


class Triple(BaseModel):
    name: str
    accuracy: float | None
    accuracy_kpi: str
    probe_p50_ms: float | None
    context_tokens: float | None
    hit_at_1: float | None
    hit_at_3: float | None
    tokens_per_correct: float | None


def triple(name: str, kpis: list[Kpi]) -> Triple:
    values = {k.name: k.value for k in kpis if k.tag is None}
    chosen = next((n for n in ACCURACY if values.get(n) is not None), ACCURACY[-1])
    return Triple(
        name=name,
        accuracy=values.get(chosen),
        accuracy_kpi=chosen,
        probe_p50_ms=values.get("probe_p50"),
        context_tokens=values.get("pack_tokens"),
        hit_at_1=values.get("hit_at_1"),
        hit_at_3=values.get("hit_at_3"),
        tokens_per_correct=values.get("tokens_per_correct"),
    )


def _number(value: float | None, unit: str) -> str:
    return DASH if value is None else f"{value:,.0f}{unit}"


def run_lines(name: str, kpis: list[Kpi]) -> list[str]:
    return [line(triple(name, kpis))]


def compare_lines(table: dict[str, list[Kpi]]) -> list[str]:
    """One line per group, over the cases every group finished."""
    return [line(triple(name, kpis)) for name, kpis in table.items()]


def line(t: Triple) -> str:
    proxy = " (proxy: no model)" if t.accuracy_kpi == "extractive_answer" else ""
    return (
        f"{t.name}: accuracy {pct(t.accuracy)} [{t.accuracy_kpi}{proxy}] · "
        f"probe p50 {_number(t.probe_p50_ms, ' ms')} · "
        f"{_number(t.context_tokens, '')} context tokens/probe | "
        f"hit@1 {pct(t.hit_at_1)} · hit@3 {pct(t.hit_at_3)} · "
        f"{_number(t.tokens_per_correct, '')} tokens/correct answer"
    )
