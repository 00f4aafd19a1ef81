"""Global rate limits in Redis, shared by every worker on every machine.

Celery's `rate_limit` counts per worker, so ten workers at 20/s make 200/s. This limiter
keeps one GCRA state per key in Redis and admits with an atomic Lua script that reads Redis'
own clock, so the limit holds however many workers there are and however their clocks drift.
Limits are set per kind (`engine=20/s`, `model=60/m`) and apply to each engine or model name.
A 429 from a model or an engine pushes its key back for everyone (`Limiter.pause`), so the
crowd of workers waits out the Retry-After together instead of only the one that was told.
"""

from __future__ import annotations

import asyncio
import functools
import math
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, Field
from redis.asyncio import Redis

from memeval.engines import attempts
from memeval.engines.adapters.transport import back_pressure
from memeval.engines.base import Engine
from memeval.errors import UsageError
from workers import metrics
from workers.budget import connect_redis

LUA = Path(__file__).resolve().parent / "lua"
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


class Limiter:
    """Admits calls for one (kind, name) pair at its rate, whichever worker asks."""

    def __init__(self, redis: Redis, *, prefix: str = "memeval:") -> None:
        self.redis = redis
        self.prefix = prefix
        self._admit = redis.register_script((LUA / "gcra.lua").read_text())
        self._pause = redis.register_script((LUA / "gcra_pause.lua").read_text())

    def key(self, rate: Rate, name: str) -> str:
        return f"{self.prefix}rate:{rate.kind.value}:{name}"

    async def try_acquire(self, rate: Rate, name: str) -> tuple[bool, float, float]:
        """(admitted, seconds to wait, Redis time of the decision in seconds)."""
        allowed, wait_us, now_us = await self._admit(
            keys=[self.key(rate, name)], args=[rate.interval_us, rate.burst]
        )
        return bool(allowed), int(wait_us) / 1e6, int(now_us) / 1e6

    async def acquire(self, rate: Rate, name: str) -> float:
        """Wait for admission; returns the Redis time at which it was granted."""
        start = time.perf_counter()
        while True:
            allowed, wait_s, now_s = await self.try_acquire(rate, name)
            if allowed:
                metrics.limiter_waited(rate.kind.value, time.perf_counter() - start)
                return now_s
            await asyncio.sleep(wait_s)

    async def pause(self, rate: Rate, name: str, seconds: float) -> float:
        """The service said 429: hold everyone on this key for `seconds` (its Retry-After, at
        most `MAX_PAUSE_S`); returns how long the key is now held, a longer earlier hold kept."""
        held_us = int(min(max(seconds, 0.0), MAX_PAUSE_S) * 1e6)
        waited_us = await self._pause(
            keys=[self.key(rate, name)], args=[held_us, rate.interval_us, rate.burst]
        )
        return int(waited_us) / 1e6


_ENGINE_CALLS = frozenset(
    {
        "store",
        "query",
        "query_at",
        "conflicts",
        "reset",
        "ingest",
        "pre_turn",
        "post_turn",
        "start_session",
        "recall_for_compaction",
        "compile_context",
        "build_beliefs",
        "list",
        "forget",
        "inspect",
    }
)


class _Throttled:
    """Forwards everything to the engine; its memory calls first pass the global limiter, and
    a 429 the engine's transport meets during one of them pushes the limiter back."""

    def __init__(self, engine: Engine, limiter: Limiter, rate: Rate) -> None:
        self._engine = engine
        self._limiter = limiter
        self._rate = rate

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._engine, name)
        if name not in _ENGINE_CALLS:
            return target
        call = cast(Callable[..., Awaitable[Any]], target)

        @functools.wraps(call)  # keeps the signature: callers inspect it (`takes_question`)
        async def throttled(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            await self._limiter.acquire(self._rate, self._engine.name)
            # The limiter's queue is not the engine's latency.
            attempts.waited((time.perf_counter() - start) * 1000.0)
            with back_pressure(partial(self._limiter.pause, self._rate, self._engine.name)):
                return await call(*args, **kwargs)

        return throttled


def throttle_engine(engine: Engine, limiter: Limiter, rate: Rate | None) -> Engine:
    """The engine itself when no engine rate is set, else a view whose calls are rate-limited."""
    if rate is None:
        return engine
    return cast(Engine, _Throttled(engine, limiter, rate))


@asynccontextmanager
async def limited_engine(
    engine: Engine, rates: list[Rate], redis_url: str
) -> AsyncIterator[Engine]:
    """What a farm task wraps around its engine: the engine itself when no engine rate is set,
    else a throttled view on a Redis connection held for the case."""
    rate = rate_for(rates, RateKind.engine)
    if rate is None:
        yield engine
        return
    redis = await connect_redis(redis_url)
    try:
        yield throttle_engine(engine, Limiter(redis), rate)
    finally:
        await redis.aclose()
