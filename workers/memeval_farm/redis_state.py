"""The farm's shared state: rate limits and budgets in Redis, behind the core's protocols.

A task (and `memeval run --in-process` given limits or a budget) hands the core an opener
from here; the core calls it only when the run sets a rate or a budget, so a run without them
never connects to Redis.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import overload

from redis.asyncio import Redis
from rich.console import Console

from memeval.engines.base import Engine
from memeval.evaluation.models import ModelPlan
from memeval.llm import answer
from memeval.llm.answer import Answerer, PaidCalls
from memeval.llm.in_memory import MemoryState
from memeval.llm.rates import Rate
from memeval.llm.shared import OpenShared, SharedState
from memeval.llm.spec import LlmSpec
from memeval.runner.throttle import engine_within
from memeval_farm.budget import Budget, connect_redis
from memeval_farm.limiter import Limiter


class RedisState:
    """Limits and budgets on one Redis connection, as every worker of the farm sees them."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    def limiter(self) -> Limiter:
        return Limiter(self.redis)

    def budget(self, scopes: list[str]) -> Budget:
        return Budget(self.redis, scopes)


@overload
def redis_state(redis_url: str) -> OpenShared: ...


@overload
def redis_state(redis_url: None) -> None: ...


def redis_state(redis_url: str | None) -> OpenShared | None:
    """An opener that connects to `redis_url` for as long as it is open; None without a URL,
    so the core says that budgets and rates need one."""
    if redis_url is None:
        return None
    url = redis_url

    @asynccontextmanager
    async def opened() -> AsyncIterator[SharedState]:
        redis = await connect_redis(url)
        try:
            yield RedisState(redis)
        finally:
            await redis.aclose()

    return opened


@asynccontextmanager
async def limited_engine(
    engine: Engine, rates: list[Rate], redis_url: str
) -> AsyncIterator[Engine]:
    """What a farm task wraps around its engine: the engine itself when no engine rate is set,
    else a throttled view on a Redis connection held for the case."""
    async with engine_within(engine, rates, redis_state(redis_url)) as limited:
        yield limited


@asynccontextmanager
async def open_answerer(
    spec: LlmSpec, *, redis_url: str | None = None, ledger: PaidCalls | None = None
) -> AsyncIterator[Answerer]:
    """`memeval.llm.answer.open_answerer` with its budget and limiter in the farm's Redis."""
    async with answer.open_answerer(spec, shared=redis_state(redis_url), ledger=ledger) as a:
        yield a


@asynccontextmanager
async def answerer_for(
    spec: LlmSpec | None, *, redis_url: str | None = None, ledger: PaidCalls | None = None
) -> AsyncIterator[Answerer | None]:
    """What a farm task wraps around `run_case`: no answerer when the run has no model."""
    async with answer.answerer_for(spec, shared=redis_state(redis_url), ledger=ledger) as a:
        yield a


def shared_for_process() -> OpenShared:
    """Where an in-process run keeps its limits and budget: this process's memory, unless
    MEMEVAL_REDIS_URL names a Redis to share them with other processes."""
    url = os.environ.get("MEMEVAL_REDIS_URL")
    return redis_state(url) if url else MemoryState().opener()


def redis_opener(plan: ModelPlan, console: Console) -> Callable[[str], None] | None:
    """Opens the budgets the run's model reserves against (its own, or its sweep's) in the
    farm's Redis, named by URL, before any case is dispatched."""
    opens = plan.shared_opener(console)
    if opens is None:
        return None
    return lambda redis_url: opens(redis_state(redis_url))
