"""Times every engine call, remembers which run step it belonged to, and names every write.

Every engine call of a case passes through `Stopwatch.time`, which makes it the one place
that can see them all:

- A call's latency is the engine's, not the network's: the attempts the transport retried and
  the waits after them (reported through `memeval.engines.attempts`) are taken out, so a
  latency KPI measures the attempt that answered, however many faults came before it.
- Every write gets an idempotency key (`memeval.engines.idempotency`): the case's tenant and
  the write's index within the case. The tenant names the run, case, trial and attempt, and a
  case makes its writes in a fixed order, so the key is the same on every retry of that write
  and on a redelivered task, and differs between any two writes. An engine that honours it
  stores a write once even when its first response was lost.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from contextlib import AbstractContextManager, nullcontext
from typing import TypeVar

from memeval.engines.attempts import Attempts, counting
from memeval.engines.idempotency import write_key
from memeval.results import Timing

T = TypeVar("T")

WRITES = frozenset({"store", "ingest", "pre_turn", "post_turn", "write_history"})
"""The engine calls that store something (`pre_turn` logs the user's turn)."""


class Stopwatch:
    def __init__(self, writer: str = "") -> None:
        """`writer` prefixes the write keys (the case's tenant); empty, writes go unnamed."""
        self.step = "write"
        self.timings: list[Timing] = []
        self.retried = Attempts()  # every failed attempt behind this case's calls
        self._writer = writer
        self._writes = 0

    async def time(self, call: str, awaitable: Awaitable[T]) -> T:
        """Await `awaitable`, recording its duration even when it raises."""
        with counting(self.retried) as retried, self._named(call):
            start = time.perf_counter()
            try:
                return await awaitable
            finally:
                ms = max(0.0, (time.perf_counter() - start) * 1000.0 - retried.lost_ms)
                self.timings.append(Timing(step=self.step, call=call, ms=round(ms, 3)))

    def _named(self, call: str) -> AbstractContextManager[None]:
        if call not in WRITES or not self._writer:
            return nullcontext()
        index, self._writes = self._writes, self._writes + 1
        return write_key(f"{self._writer}:{index}")
