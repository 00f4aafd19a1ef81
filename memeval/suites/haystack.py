"""A needle sweep (`memeval run --noise 100,1000,10000 --needle early,middle,late --seed 7`):
every scenario run once per haystack size and needle position, each variant a case of its own.

Engine authors read the curve, not one number: how pack hit and MRR fall as the tenant grows,
and whether a fact is lost when it is old (late in the history means the needle is the most
recent write, early means everything else came after it). Each variant's probes carry the tags
`haystack:SIZE-POSITION`, `noise:SIZE` and `needle:POSITION`, so the report's per-tag KPIs
give pack hit and MRR per size x position without a table of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Literal

from pydantic import BaseModel, Field

from memeval.errors import UsageError
from memeval.suites.fixture import Fixture
from memeval.suites.noise import blocking, needle_now
from memeval.suites.scenario import Noise, Scenario

Position = Literal["early", "middle", "late"]
POSITIONS: tuple[Position, ...] = ("early", "middle", "late")
MAX_ITEMS = 1_000_000


class Haystack(BaseModel):
    """The sweep as asked for; it travels with the run's options, so a resume rebuilds it."""

    sizes: list[int] = Field(min_length=1)
    needles: list[Position] = Field(
        default_factory=list, description="Empty: distractors spread as a scenario's own `noise`."
    )
    seed: int = 0


def parse_sizes(text: str) -> list[int]:
    """`--noise 100,1000,10000` (commas, `_` or `,` inside numbers not allowed: one list)."""
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(
            f"--noise {text!r} is not a list of sizes", fix="write e.g. --noise 100,1000,10000"
        ) from None
    bad = [n for n in sizes if not 1 <= n <= MAX_ITEMS]
    if not sizes or bad:
        raise UsageError(
            f"--noise {text!r}: every size must be from 1 to {MAX_ITEMS:,}",
            fix="write e.g. --noise 100,1000,10000",
        )
    return sizes


def parse_needles(text: str) -> list[Position]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in parts if p not in POSITIONS]
    if not parts or bad:
        raise UsageError(
            f"--needle {text!r}: positions are early, middle and late",
            fix="write e.g. --needle early,middle,late",
        )
    return [p for p in POSITIONS if p in parts]


def expand(cases: Iterable[Scenario | Fixture], sweep: Haystack) -> Iterator[Scenario | Fixture]:
    """Each scenario once per size and position; fixtures, which hold no history, once. Read
    as the cases come, so a benchmark file streams through a sweep as it does a plain run."""
    for case in cases:
        if isinstance(case, Fixture):
            yield case
            continue
        needles: list[Position | None] = [*sweep.needles] or [None]
        for size in sweep.sizes:
            for needle in needles:
                yield _variant(case, size, needle, sweep.seed)


def _variant(scenario: Scenario, size: int, needle: Position | None, seed: int) -> Scenario:
    shape = scenario.noise.shape if scenario.noise is not None else "turns"
    noise = Noise(items=size, seed=seed, shape=shape, needle=needle)
    where = needle or "spread"
    tags = [f"haystack:{size}-{where}", f"noise:{size}", f"needle:{where}"]
    probes = [p.model_copy(update={"tags": [*p.tags, *tags]}) for p in scenario.probes]
    update: dict[str, object] = {
        "name": f"{scenario.name}.n{size}.{where}",
        "noise": noise,
        "probes": probes,
    }
    now = needle_now(scenario, noise)
    if now is not None:
        update["now"] = now
    variant = scenario.model_copy(update=update)
    word = blocking(variant)
    if word is not None:
        raise UsageError(
            f"--noise cannot pad `{scenario.id}`: every distractor would hold `{word}`",
            fix="leave it out with --only, or give its probe `match: word`",
        )
    return variant
