"""The evaluation time of the case being run: a pinned clock, so a suite scores the same next year.

Expiry and future-state cases change their answer as the calendar moves when anything reads the
wall clock. The runner pins each case to its suite's evaluation time with `pinned`, and engines
and checks ask `now()` instead of `datetime.now()`. A context variable, not an argument, so the
engine protocol keeps its shape and cases sharing one engine each see their own time; engines in
other processes receive it on the wire (the `http` protocol sends it with every call).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime

_NOW: ContextVar[datetime | None] = ContextVar("memeval_now", default=None)


@contextmanager
def pinned(at: datetime) -> Iterator[None]:
    """Every `now()` inside reads `at` (made timezone-aware as UTC if it is naive)."""
    token = _NOW.set(at if at.tzinfo else at.replace(tzinfo=UTC))
    try:
        yield
    finally:
        _NOW.reset(token)


def now() -> datetime:
    """The pinned evaluation time, or the wall clock outside a pinned case."""
    return _NOW.get() or datetime.now(UTC)


def is_pinned() -> bool:
    return _NOW.get() is not None
