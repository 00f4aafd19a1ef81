"""Times every engine call and remembers which run step it belonged to."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import TypeVar

from memeval.results import Timing

T = TypeVar("T")


class Stopwatch:
    def __init__(self) -> None:
        self.step = "write"
        self.timings: list[Timing] = []

    async def time(self, call: str, awaitable: Awaitable[T]) -> T:
        """Await `awaitable`, recording its duration even when it raises."""
        start = time.perf_counter()
        try:
            return await awaitable
        finally:
            ms = (time.perf_counter() - start) * 1000.0
            self.timings.append(Timing(step=self.step, call=call, ms=round(ms, 3)))
