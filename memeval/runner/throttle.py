"""An engine whose memory calls first pass a rate limiter, whichever limiter the run has.

A 429 the engine's transport meets during one of them pushes the limiter back, so every
worker sharing the limiter waits out the Retry-After, not only the one that was told.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any, cast

from memeval.engines import attempts
from memeval.engines.adapters.transport import back_pressure
from memeval.engines.base import Engine
from memeval.errors import UsageError
from memeval.llm.rates import Rate, RateKind, rate_for
from memeval.llm.shared import OpenShared, RateLimiter

ADMITTED: ContextVar[float | None] = ContextVar("memeval_admitted_at", default=None)
"""The limiter's clock (seconds) when the engine call now running was admitted, None when no
rate applies. A call reaches the engine some milliseconds after its admission, so counting
calls by their arrival can see a window hold one more than the limit allowed; an engine that
logs its calls (the latency benchmark's) logs this too, and the rate is judged by it."""

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
        "forget_write",
        "inspect",
        "write_history",  # an engine's own bulk path: one call to its service
    }
)


def _per_turn_history(engine: Engine) -> bool:
    return type(engine).write_history is Engine.write_history


class _Throttled:
    """Forwards everything to the engine; its memory calls first pass the limiter."""

    def __init__(self, engine: Engine, limiter: RateLimiter, rate: Rate) -> None:
        self._engine = engine
        self._limiter = limiter
        self._rate = rate

    def __getattr__(self, name: str) -> Any:
        if name == "write_history" and _per_turn_history(self._engine):
            # The default history is one `post_turn` per turn, each a call to the service:
            # run it on this view, so every turn passes the limiter (on the engine itself,
            # a bulk-loaded history made every call unlimited).
            return functools.partial(Engine.write_history, cast(Engine, self))
        target = getattr(self._engine, name)
        if name not in _ENGINE_CALLS:
            return target
        call = cast(Callable[..., Awaitable[Any]], target)

        async def throttled(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            admitted = ADMITTED.set(await self._limiter.acquire(self._rate, self._engine.name))
            # The limiter's queue is not the engine's latency.
            attempts.waited((time.perf_counter() - start) * 1000.0)
            try:
                with back_pressure(partial(self._limiter.pause, self._rate, self._engine.name)):
                    return await call(*args, **kwargs)
            finally:
                ADMITTED.reset(admitted)

        return throttled


def throttle_engine(engine: Engine, limiter: RateLimiter, rate: Rate | None) -> Engine:
    """The engine itself when no engine rate is set, else a view whose calls are rate-limited."""
    if rate is None:
        return engine
    return cast(Engine, _Throttled(engine, limiter, rate))


@asynccontextmanager
async def engine_within(
    engine: Engine, rates: list[Rate], shared: OpenShared | None
) -> AsyncIterator[Engine]:
    """The engine itself when no engine rate is set, else a throttled view on the shared
    state, opened for as long as the view is used."""
    rate = rate_for(rates, RateKind.engine)
    if rate is None:
        yield engine
        return
    if shared is None:
        raise UsageError(
            "an engine rate limit needs somewhere to keep its state",
            fix="pass the farm's Redis URL, or drop --rate engine=...",
        )
    async with shared() as state:
        yield throttle_engine(engine, state.limiter(), rate)
