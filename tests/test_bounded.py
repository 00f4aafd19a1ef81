"""`Bounded`: at most `limit` at work, the next started only in a freed slot, and the first
error stops what would come after it."""

from __future__ import annotations

import asyncio

import pytest

from memeval.bounded import Bounded


class Boom(Exception):
    pass


def test_no_more_than_the_limit_run_at_once_and_every_one_runs() -> None:
    busy, most, done = 0, 0, []

    async def work(n: int) -> None:
        nonlocal busy, most
        busy += 1
        most = max(most, busy)
        await asyncio.sleep(0.001 * (n % 3))
        busy -= 1
        done.append(n)

    async def go() -> None:
        slots = Bounded(3)
        for n in range(20):
            await slots.start(work(n))
        await slots.finish()

    asyncio.run(go())
    assert most == 3 and sorted(done) == list(range(20))


def test_the_first_error_stops_the_next_start() -> None:
    started: list[int] = []

    async def work(n: int) -> None:
        started.append(n)
        if n == 0:
            raise Boom

    async def go() -> None:
        slots = Bounded(1)
        for n in range(10):
            await slots.start(work(n))
        await slots.finish()

    with pytest.raises(Boom):
        asyncio.run(go())
    assert started == [0]
