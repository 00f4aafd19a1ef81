"""How every number reads, in the terminal, the markdown, the HTML and a comparison alike:
one rule per unit, so the same KPI never shows as `0.7817 score` in one place and `0.782` in
another. The HTML report carries these strings too; its script only draws."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from memeval.report.stats import Interval
from memeval.results import Kpi
from memeval.scoring.kpis import NEEDS
from memeval.summary import DASH, pct, plural

__all__ = ["DASH", "pct"]  # every number's form, wherever it is defined

NOT_APPLICABLE = "n/a"
"""What a KPI the engine cannot produce shows (see `memeval.scoring.kpis.NEEDS`)."""


def ms(value: float) -> str:
    """Three significant digits (`0.674`, `1.13`, `12.4`), whole milliseconds from 100."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:#.3g}"


def usd(value: float) -> str:
    """Cents as `$0.0123`, less as its two leading digits (`$0.0015`), never in exponents."""
    if value == 0:
        return "$0"
    if abs(value) >= 0.01:
        return f"${value:.4f}"
    return f"${value:.{1 - math.floor(math.log10(abs(value)))}f}"


def number(value: float | None, unit: str) -> str:
    """A value in its unit's one form: `58.0%`, `0.783`, `370.1 tokens`, `1.13 ms`, `$0.0015`."""
    if value is None:
        return DASH
    match unit:
        case "share":
            return pct(value)
        case "ms":
            return f"{ms(value)} ms"
        case "usd":
            return usd(value)
        case "score":
            return f"{value:.3f}"
        case "tokens":
            return f"{value:.0f} tokens" if value == round(value) else f"{value:.1f} tokens"
    return f"{value:.0f}" if value == round(value) else f"{value:.1f}"


def ci(interval: Interval | None, unit: str = "share") -> str:
    """The interval; n/a for a measured number none can be drawn for (one case of it)."""
    if interval is not None and interval.value is not None and interval.low is None:
        return NOT_APPLICABLE
    if interval is None or interval.low is None or interval.high is None:
        return DASH
    return f"{number(interval.low, unit)} – {number(interval.high, unit)}"


def sample(interval: Interval, trials: int) -> str:
    """What `n` is over: `n=30 (10 cases × 3 trials)`, so trials never pass for cases."""
    if trials > 1 and interval.cases:
        return f"n={interval.n} ({plural(interval.cases, 'case')} × {trials} trials)"
    return f"n={interval.n}"


def delta(value: float | None, unit: str) -> str:
    """A change: shares in percentage points, which is how people say them aloud."""
    if value is None:
        return DASH
    if unit == "share":
        return f"{100 * value:+.1f} pts"
    sign = "+" if value >= 0 else "-"
    shown = number(abs(value), unit)
    return f"{sign}{shown}"


def kpi_number(kpi: Kpi, kpis: Sequence[Kpi]) -> str:
    """A KPI's value beside the others of its run (see `unpriced`)."""
    if kpi.name in unpriced({k.name: k.value for k in kpis if k.tag is None}):
        return DASH
    if kpi.value is None and kpi.name in NEEDS:
        return NOT_APPLICABLE
    return number(kpi.value, kpi.unit)


def unpriced(values: Mapping[str, float | None]) -> frozenset[str]:
    """The cost KPIs nobody measured, by a run's KPI values: they show a dash, not a `$0`
    that reads as free. The answering model's spend without a model (no `--llm`); the cost
    per correct answer when neither a model nor the engine was priced (or none was correct,
    when it has no value at all)."""
    model_ran = values.get("model_answer") is not None or values.get("judge_answer") is not None
    if model_ran:
        return frozenset()
    if values.get("engine_usd") is None:
        return frozenset({"answerer_usd", "usd_per_correct"})
    return frozenset({"answerer_usd"})


def delta_span(low: float | None, high: float | None, unit: str) -> str:
    """An interval of changes with its unit said once: `-44.5 … -30.2 pts`."""
    if low is None or high is None:
        return DASH
    first, last = delta(low, unit), delta(high, unit)
    suffix = last[len(last.rstrip("abcdefghijklmnopqrstuvwxyz")) - 1 :]
    if suffix.startswith(" ") and first.endswith(suffix):
        first = first.removesuffix(suffix)
    return f"{first} … {last}"
