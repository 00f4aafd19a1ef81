"""What the engine cost over a run, from the usage windows of its cases.

Each case records the engine's running totals when it started and when it ended. Summing
per-case deltas would count a concurrent neighbour's calls once per case that overlapped
them; the union of the windows on each counter counts every increment once, and leaves out
what happened while none of the run's cases was running (a pause before `--resume`, or
another user's traffic between sessions on a shared account).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from memeval.engines.types import Usage
from memeval.results import CaseResult, UsageWindow


def engine_spend(cases: Iterable[CaseResult]) -> Usage | None:
    """The engine's calls, tokens and cost over the run; None when it reports no usage."""
    return usage_union([c.engine_usage for c in cases if c.engine_usage is not None])


def usage_union(windows: list[UsageWindow]) -> Usage | None:
    """A window seen twice counts once, so a bootstrap resample drawing a case twice does too."""
    if not windows:
        return None
    return Usage(
        calls=_union(windows, lambda u: u.calls),
        tokens=_union(windows, lambda u: u.tokens),
        usd_micros=_union(windows, lambda u: u.usd_micros),
    )


def _union(windows: list[UsageWindow], counter: Callable[[Usage], int]) -> int:
    spans = sorted((counter(w.before), max(counter(w.before), counter(w.after))) for w in windows)
    total, start, end = 0, *spans[0]
    for low, high in spans[1:]:
        if low > end:
            total += end - start
            start, end = low, high
        else:
            end = max(end, high)
    return total + end - start
