"""The run bootstrap with numpy: every resample's KPIs from one matrix product per block.

Adding up tallies case by case cost a run of 5,000 cases some forty seconds of CPU for its
2,000 resamples. A resample is a count per case (how often it was drawn), so its sums are
those counts times the cases' numbers, and a block of resamples is one matrix product. The
draws are the very ones `stats.bootstrap` makes with `random.Random(seed).choices`: numpy's
MT19937 is set to Python's state and its raw words are turned into `random()` as CPython does,
so the seed means what it meant and an interval moves only by the order floats are added in.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memeval.engines.types import Usage
from memeval.report.stats import RESAMPLES, SEED
from memeval.scoring.kpis import QUANTILES, Tally, merge

Ints = npt.NDArray[np.int64]
Counts = npt.NDArray[np.int32]
Floats = npt.NDArray[np.float64]

BLOCK = 2_000_000
"""Cells (resamples x cases or samples) of one block's matrices: some 16 MB each."""


def python_draws(sizes: Sequence[int], resamples: int, seed: int, rows: int) -> Iterator[Ints]:
    """Blocks of `rows` resamples, each row the indices `rng.choices(pool, k=len(pool))`
    draws from each pool in turn (offset into the pools laid end to end), as
    `stats.bootstrap` does."""
    width = sum(sizes)
    if width == 0:
        return
    state = random.Random(seed).getstate()[1]
    generator = np.random.MT19937()
    key = np.array(state[:624], dtype=np.uint32)
    generator.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": state[624]}}
    lengths = np.repeat(np.array(sizes, dtype=np.float64), sizes)
    offsets = np.repeat(np.cumsum([0, *sizes[:-1]]), sizes)
    for start in range(0, resamples, rows):
        block = min(rows, resamples - start)
        raw = generator.random_raw(2 * block * width).reshape(block, width, 2)
        # CPython's random(): 53 bits from two 32-bit words; choices() then floors random() * n.
        high, low = raw[..., 0] >> np.uint64(5), raw[..., 1] >> np.uint64(6)
        uniform = (high * 67108864.0 + low) * (1.0 / 9007199254740992.0)
        yield offsets + np.floor(uniform * lengths).astype(np.int64)


def counts(drawn: Ints, width: int) -> Counts:
    """How often each of `width` units was drawn, a row per resample (32 bits: half the
    memory the per-sample sums below stream through)."""
    rows = drawn.shape[0]
    flat = (np.arange(rows)[:, None] * width + drawn).ravel()
    return np.bincount(flat, minlength=rows * width).reshape(rows, width).astype(np.int32)


@dataclass(frozen=True)
class Drawn(Tally):
    """A resample's tally whose percentiles and engine spend were worked out over the whole
    block at once: its numbers are the sums, and the KPIs read from it as from any tally."""

    quantiles: dict[str, tuple[float | None, int]] = field(default_factory=dict)
    spend: Usage | None = None

    def quantile(self, name: str) -> tuple[float | None, int]:
        return self.quantiles[name]

    def engine_spend(self) -> Usage | None:
        return self.spend


def weighted_percentiles(
    samples: Sequence[tuple[float, ...]], weights: Counts, q: Sequence[float]
) -> list[tuple[Floats, Counts]]:
    """Nearest-rank percentiles (`kpis.percentile`) of each row's multiset, where unit i's
    samples appear `weights[row, i]` times: (values, NaN where none; n) for each q."""
    owner = np.repeat(np.arange(len(samples)), [len(s) for s in samples])
    flat = np.fromiter((v for s in samples for v in s), dtype=np.float64, count=len(owner))
    order = np.argsort(flat, kind="stable")
    ordered, owner = flat[order], owner[order]
    rows = weights.shape[0]
    if not len(ordered):
        return [(np.full(rows, np.nan), np.zeros(rows, dtype=np.int32)) for _ in q]
    running = np.cumsum(weights[:, owner], axis=1, dtype=np.int32)
    n = running[:, -1]
    out = []
    for each in q:
        index = np.maximum(0, np.ceil(each / 100.0 * n.astype(np.float64)) - 1)
        at = np.minimum((running <= index[:, None]).sum(axis=1), len(ordered) - 1)
        out.append((np.where(n > 0, ordered[at], np.nan), n))
    return out


def union_length(spans: Ints, drawn: npt.NDArray[np.bool_]) -> Ints:
    """`spend._union` of the spans (before, after) each row draws: spans sorted by start, a
    span adds what of it lies past the furthest end of the drawn spans before it."""
    order = np.argsort(spans[:, 0], kind="stable")
    start, end = spans[order, 0], spans[order, 1]
    picked = drawn[:, order]
    ends = np.where(picked, end, np.iinfo(np.int64).min)
    before = np.maximum.accumulate(ends, axis=1)
    before = np.concatenate([np.full((len(drawn), 1), np.iinfo(np.int64).min), before[:, :-1]], 1)
    added = np.maximum(0, end - np.maximum(start, before))
    total: Ints = np.where(picked, added, 0).sum(axis=1)
    return total


def resampled_values(
    strata: Mapping[str, Sequence[str]],
    tallies: Mapping[str, Tally],
    statistic: Callable[[Tally], Mapping[str, float | None]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, list[float]]:
    """`stats.bootstrap(strata, lambda ids: statistic(merge(tallies[i] for i in ids)))`,
    resample for resample, without merging a tally per drawn case."""
    pools = [list(units) for units in strata.values() if units]
    units = [unit for pool in pools for unit in pool]
    if not units:  # every resample draws nothing: the statistic of no case, each time
        empty = {k: v for k, v in statistic(merge([])).items() if v is not None}
        return {k: [v] * resamples for k, v in empty.items()}
    each = [tallies[u] for u in units]
    out: dict[str, list[float]] = defaultdict(list)
    draws = resample_weights([len(p) for p in pools], resamples, seed, block_rows(each))
    for weights in draws:
        for drawn in weighted_tallies(each, weights):
            for name, value in statistic(drawn).items():
                if value is not None:
                    out[name].append(value)
    return out


def block_rows(each: Sequence[Tally]) -> int:
    """Resamples a block holds: its widest matrix is a column per case or per sample
    (percentiles), whichever are more; a run of long conversations holds many samples a case."""
    widest = max([len(each), *(sum(len(read(t)) for t in each) for read in _by_samples())])
    return max(1, BLOCK // max(1, widest))


def resample_weights(
    sizes: Sequence[int], resamples: int, seed: int, rows: int
) -> Iterator[Counts]:
    """Blocks of `rows` resamples as counts per unit: the draws `stats.bootstrap` makes."""
    width = sum(sizes)
    for drawn in python_draws(sizes, resamples, seed, rows):
        yield counts(drawn, width)


def _by_samples() -> dict[Callable[[Tally], tuple[float, ...]], list[str]]:
    """The quantile KPIs, grouped by the samples they read."""
    by_samples: dict[Callable[[Tally], tuple[float, ...]], list[str]] = defaultdict(list)
    for name, (read, _) in QUANTILES.items():
        by_samples[read].append(name)
    return by_samples


def weighted_tallies(each: Sequence[Tally], weights: Counts) -> Iterator[Drawn]:
    """A row of `weights` per tally: the merge of `each` with unit i taken `weights[row, i]`
    times, as one matrix product for the sums and one pass for the percentiles and spend."""
    numbers = np.array([t.numbers for t in each], dtype=np.float64).reshape(len(each), -1)
    owners = [i for i, t in enumerate(each) for _ in t.windows]
    windows = [w for t in each for w in t.windows]
    meters: list[Callable[[Usage], int]] = [
        lambda u: u.calls,
        lambda u: u.tokens,
        lambda u: u.usd_micros,
    ]
    spans = [
        np.array([[m(w.before), max(m(w.before), m(w.after))] for w in windows], dtype=np.int64)
        for m in meters
    ]
    sums = (weights.astype(np.float64) @ numbers).tolist()
    quantiles: dict[str, list[tuple[float | None, int]]] = {}
    for read, names in _by_samples().items():
        found = weighted_percentiles(
            [read(t) for t in each], weights, [QUANTILES[n][1] for n in names]
        )
        for name, (got, n) in zip(names, found, strict=True):
            quantiles[name] = [
                (None if np.isnan(v) else v, c)
                for v, c in zip(got.tolist(), n.tolist(), strict=True)
            ]
    spend: list[Usage | None] = [None] * len(sums)
    if windows:
        seen: npt.NDArray[np.bool_] = weights[:, owners] > 0
        some: list[bool] = np.any(seen, axis=1).tolist()
        calls, tokens, usd = (union_length(s, seen).tolist() for s in spans)
        # No window drawn is no usage reported (None), as `usage_union([])` says.
        spend = [
            Usage(calls=c, tokens=k, usd_micros=d) if any_ else None
            for c, k, d, any_ in zip(calls, tokens, usd, some, strict=True)
        ]
    for row, total in enumerate(sums):
        yield Drawn(
            tuple(total),
            quantiles={name: got[row] for name, got in quantiles.items()},
            spend=spend[row],
        )
