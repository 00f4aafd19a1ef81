"""Statistics for small evaluation samples, in pure Python (`resampling` draws the same run
bootstrap with numpy, for runs of thousands of cases).

Everything is seeded: a report rebuilt from the same results shows the same intervals, and two
people comparing the same runs see the same verdicts.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

RESAMPLES = 2000
LEVEL = 0.95
SEED = 7

K = TypeVar("K")


class Interval(BaseModel):
    """A point estimate and its bootstrap interval; bounds are None when they cannot be drawn."""

    model_config = ConfigDict(extra="forbid")

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    cases: int = 0  # distinct cases behind n (their trials counted once)


class Spread(BaseModel):
    """How one number varied across trials or repeated runs."""

    model_config = ConfigDict(extra="forbid")

    mean: float
    sd: float
    low: float
    high: float
    n: int


def quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics, so interval bounds move smoothly."""
    if not ordered:
        raise ValueError("quantile of no values")
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def bootstrap(
    strata: Mapping[str, Sequence[K]],
    statistic: Callable[[list[K]], Mapping[str, float | None]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, list[float]]:
    """Resample units with replacement within each stratum, and collect every statistic.

    The unit is the case, not the probe or the check: everything inside one case shares its
    writes and its tenant, so treating its probes as independent would shrink the intervals.
    Strata keep each dimension's fixture count fixed, as the suite's design does, so a resample
    never drops a dimension from the composite.
    """
    rng = random.Random(seed)
    pools = [list(units) for units in strata.values() if units]
    samples: dict[str, list[float]] = defaultdict(list)
    for _ in range(resamples):
        drawn = [unit for pool in pools for unit in rng.choices(pool, k=len(pool))]
        for name, value in statistic(drawn).items():
            if value is not None:
                samples[name].append(value)
    return samples


def percentile_interval(
    samples: Sequence[float], level: float = LEVEL
) -> tuple[float | None, float | None]:
    if not samples:
        return None, None
    ordered = sorted(samples)
    tail = (1.0 - level) / 2.0
    return quantile(ordered, tail), quantile(ordered, 1.0 - tail)


def mcnemar(only_first: int, only_second: int) -> float:
    """Exact two-sided McNemar test: the binomial test on the discordant pairs alone.

    Units where both sides agree carry no information about which side is better, which is why
    a thousand agreeing probes and one flip is still one flip.
    """
    n = only_first + only_second
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_first, only_second) + 1))
    # Integers divided exactly: `float(2**n)` overflowed past 1,023 flips (a 5,000-case compare).
    return min(1.0, 2 * tail / (1 << n))


def spread(values: Sequence[float]) -> Spread:
    n = len(values)
    if n == 0:
        raise ValueError("spread of no values")
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return Spread(mean=mean, sd=sd, low=min(values), high=max(values), n=n)
