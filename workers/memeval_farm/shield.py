"""Redis trouble met inside a case is the farm failing, never the engine's memory.

A case talks to the farm's Redis for the shared rate limiter, inside its engine calls, and for
the answering model's budget. Under load a Redis call can time out (redis-py gives up after
5 s by default); scored, that would be a probe's failure, and stored as the case's error it
would never be retried. So the task retries such a case as it retries one whose engine was
unreachable; inside engine calls, where the runner scores whatever an engine raises, a Redis
failure travels as `FarmUnavailable`, an `EngineUnavailable` the runner lets through.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, cast

import redis

from memeval.engines.base import Engine
from memeval.errors import EngineUnavailable

REDIS_FAULTS: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError)
"""What redis-py (sync or asyncio) raises for a server that is down, restarting or too slow."""


class FarmUnavailable(EngineUnavailable):
    """The farm's own Redis failed during an engine call: infrastructure, so retried."""


class _Shielded:
    """Forwards everything to the engine; its coroutine calls turn Redis faults into
    `FarmUnavailable`."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._engine, name)
        if not inspect.iscoroutinefunction(target):
            return target
        call = cast(Callable[..., Awaitable[Any]], target)

        async def shielded(*args: Any, **kwargs: Any) -> Any:
            try:
                return await call(*args, **kwargs)
            except REDIS_FAULTS as exc:
                raise FarmUnavailable(
                    f"the farm's Redis failed during `{name}`: {type(exc).__name__}: {exc}"
                ) from exc

        return shielded


def shield(engine: Engine) -> Engine:
    return cast(Engine, _Shielded(engine))
