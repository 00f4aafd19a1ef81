"""What the transport tells the runner about the attempts behind each engine call.

A remote call may take several attempts: the transport retries a 5xx, a 429, a timeout or a
lost connection. The time the failed attempts took, and the waits after them, belong to the
network and the service's front door, not to the engine's memory, so the stopwatch takes them
out of the call's latency; and how many there were is the infrastructure trouble a run met,
which the report counts apart from the score. A context variable, as for idempotency keys:
one engine serves several cases at once, and each asyncio task must count into its own case.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Attempts:
    """Failed attempts met inside one `counting()` block, and the milliseconds they cost."""

    failed: int = 0
    lost_ms: float = 0.0
    outer: Attempts | None = None


_CURRENT: ContextVar[Attempts | None] = ContextVar("memeval_attempts", default=None)


@contextmanager
def counting(outer: Attempts | None = None) -> Iterator[Attempts]:
    """Count the failed attempts of the calls made inside, into `outer` as well (a case's
    tally), else into the block this one runs in, if any."""
    attempts = Attempts(outer=outer or _CURRENT.get())
    token = _CURRENT.set(attempts)
    try:
        yield attempts
    finally:
        _CURRENT.reset(token)


def failed_attempt(ms: float) -> None:
    """One attempt failed for an infrastructure reason; `ms` is its time and the wait after it
    (until the next attempt starts, or until the call gives up)."""
    scope = _CURRENT.get()
    while scope is not None:
        scope.failed += 1
        scope.lost_ms += ms
        scope = scope.outer


def waited(ms: float) -> None:
    """Time a call spent queued outside the engine (the farm's rate limiter): no failure, but
    not the engine's latency either."""
    scope = _CURRENT.get()
    while scope is not None:
        scope.lost_ms += ms
        scope = scope.outer
