"""Work started as it is read, a few at a time: the in-process runner and `memeval answer`
both stream a suite of any size this way, holding only the cases being worked on."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class Bounded:
    """Starts coroutines at most `limit` at a time, each only once a slot is free, so the
    caller reads the next case only then; the first that raised stops the next from
    starting, as a gather of them all would."""

    def __init__(self, limit: int) -> None:
        self._gate = asyncio.Semaphore(max(1, limit))
        self._running: set[asyncio.Task[None]] = set()

    async def start(self, work: Coroutine[Any, Any, None]) -> None:
        """Wait for a free slot, then run `work` in it; raises what an ended one raised."""
        await self._gate.acquire()
        try:
            self._raise_first()
        except BaseException:
            self._gate.release()
            work.close()
            raise
        self._running.add(asyncio.create_task(self._run(work)))

    async def finish(self) -> None:
        """Wait for every started one; the first error is raised."""
        await asyncio.gather(*self._running)

    async def _run(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        finally:
            self._gate.release()

    def _raise_first(self) -> None:
        """Forget the ones that ended; raise what the first of them that failed raised."""
        for task in [t for t in self._running if t.done()]:
            self._running.discard(task)
            task.result()
