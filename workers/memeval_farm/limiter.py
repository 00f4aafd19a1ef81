"""Global rate limits in Redis, shared by every worker on every machine.

Celery's `rate_limit` counts per worker, so ten workers at 20/s make 200/s. This limiter
keeps one GCRA state per key in Redis and admits with an atomic Lua script that reads Redis'
own clock, so the limit holds however many workers there are and however their clocks drift.
Limits are set per kind (`engine=20/s`, `model=60/m`, `memeval.llm.rates`) and apply to each
engine or model name. A 429 from a model or an engine pushes its key back for everyone
(`Limiter.pause`), so the crowd of workers waits out the Retry-After together instead of only
the one that was told. It is the farm's `memeval.llm.shared.RateLimiter`.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from redis.asyncio import Redis

from memeval.llm.rates import MAX_PAUSE_S, Rate
from memeval_farm import metrics

LUA = Path(__file__).resolve().parent / "lua"


class Limiter:
    """Admits calls for one (kind, name) pair at its rate, whichever worker asks."""

    def __init__(self, redis: Redis, *, prefix: str = "memeval:") -> None:
        self.redis = redis
        self.prefix = prefix
        self._gcra = redis.register_script((LUA / "gcra.lua").read_text())
        self._pause = redis.register_script((LUA / "gcra_pause.lua").read_text())

    def key(self, rate: Rate, name: str) -> str:
        return f"{self.prefix}rate:{rate.kind.value}:{name}"

    def _keys(self, rate: Rate, name: str) -> list[str]:
        """The key's state and its pause count, as the Lua scripts take them."""
        key = self.key(rate, name)
        return [key, f"{key}:pauses"]

    async def try_acquire(self, rate: Rate, name: str) -> tuple[bool, float, float]:
        """(admitted, seconds to wait, Redis time of the decision in seconds): a slot now or
        none, taken only if admitted."""
        allowed, wait_us, now_us, _ = await self._gcra(
            keys=self._keys(rate, name), args=[rate.interval_us, rate.burst, "try"]
        )
        return bool(allowed), int(wait_us) / 1e6, int(now_us) / 1e6

    async def acquire(self, rate: Rate, name: str) -> float:
        """Wait for admission; returns the Redis time of the slot granted. Each caller takes
        the next free slot and sleeps until it: asking again when told to wait woke every
        waiter for each slot that freed, and 64 cases at 300/s cost the workers 18.5 s of
        CPU in 13 s. A 429 pause while a caller sleeps sends it back for a slot after it."""
        start = time.perf_counter()
        keys = self._keys(rate, name)
        while True:
            _, wait_us, now_us, pauses = await self._gcra(
                keys=keys, args=[rate.interval_us, rate.burst, "reserve"]
            )
            if wait_us > 0:
                await asyncio.sleep(int(wait_us) / 1e6)
                if int(await self.redis.get(keys[1]) or 0) != int(pauses):
                    continue
            metrics.limiter_waited(rate.kind.value, time.perf_counter() - start)
            return (int(now_us) + int(wait_us)) / 1e6

    async def pause(self, rate: Rate, name: str, seconds: float) -> float:
        """The service said 429: hold everyone on this key for `seconds` (its Retry-After, at
        most `MAX_PAUSE_S`); returns how long the key is now held, a longer earlier hold kept."""
        held_us = int(min(max(seconds, 0.0), MAX_PAUSE_S) * 1e6)
        waited_us = await self._pause(
            keys=self._keys(rate, name),
            args=[held_us, rate.interval_us, rate.burst],
        )
        return int(waited_us) / 1e6
