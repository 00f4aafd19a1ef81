"""Rate limits as plain data: what `--rate engine=20/s` and `--rate model=60/m+5` mean.

They travel inside task messages and run options, so they hold only numbers; enforcing them
is the job of a `RateLimiter` (`memeval.llm.shared`): Redis on the farm, memory in-process.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum

from pydantic import BaseModel, Field

from memeval.errors import UsageError

UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
MAX_PAUSE_S = 60.0
"""The longest one 429 may hold every worker: a Retry-After of hours (a typo, a daily quota)
would otherwise stall the whole farm on one reply; a service that still refuses after this
says so again, and each refusal pushes the key back anew."""
_SPEC = re.compile(r"^(?P<kind>[a-z]+)=(?P<count>\d+)/(?P<unit>[a-z]+)(?:\+(?P<burst>\d+))?$")


class RateKind(StrEnum):
    engine = "engine"
    model = "model"


class Rate(BaseModel):
    """`count` admissions per `period_s`, with up to `burst` of them back to back."""

    kind: RateKind
    count: int = Field(gt=0)
    period_s: float = Field(gt=0)
    burst: int = Field(ge=1)

    @property
    def per_second(self) -> float:
        return self.count / self.period_s

    @property
    def interval_us(self) -> int:
        return max(1, round(self.period_s * 1e6 / self.count))


def default_burst(count: int, period_s: float) -> int:
    """A tenth of a second of traffic, at least one: enough slack that a worker waking a few
    milliseconds late does not lose its slot, too little to hurt the service."""
    return max(1, math.ceil(count / period_s / 10))


def parse_rate(text: str) -> Rate:
    """`engine=20/s`, `model=60/m`, optionally with a burst: `model=60/m+5`."""
    match = _SPEC.match(text.strip().replace(" ", ""))
    fix = "write KIND=COUNT/UNIT[+BURST], e.g. engine=20/s or model=60/m+5 (units s, m, h)"
    if match is None:
        raise UsageError(f"cannot read rate `{text}`", fix=fix)
    kind, unit = match["kind"], match["unit"]
    if kind not in RateKind.__members__:
        raise UsageError(
            f"rate `{text}` limits unknown kind `{kind}`",
            fix=f"limit one of: {', '.join(k.value for k in RateKind)}",
        )
    if unit not in UNITS:
        raise UsageError(f"rate `{text}` has unknown unit `{unit}`", fix=fix)
    count = int(match["count"])
    if count <= 0:
        raise UsageError(f"rate `{text}` admits nothing", fix="give a count of at least 1")
    burst = int(match["burst"]) if match["burst"] else default_burst(count, UNITS[unit])
    if burst < 1:
        raise UsageError(f"rate `{text}` has a zero burst", fix="give a burst of at least 1")
    return Rate(kind=RateKind(kind), count=count, period_s=UNITS[unit], burst=burst)


def parse_rates(texts: list[str]) -> list[Rate]:
    rates = [parse_rate(t) for t in texts]
    kinds = [r.kind for r in rates]
    for kind in set(kinds):
        if kinds.count(kind) > 1:
            raise UsageError(
                f"`--rate {kind.value}=...` is given twice", fix="keep one limit per kind"
            )
    return rates


def rate_for(rates: list[Rate], kind: RateKind) -> Rate | None:
    return next((r for r in rates if r.kind is kind), None)
