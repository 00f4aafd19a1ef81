"""A stable idempotency key for every write, so a retried write is stored once.

A write whose response timed out may well have been stored; the transport retries it, and
without a key the engine stores it twice. The runner names each write (`write_key`) from the
run, case, trial and the write's index within the case; the key is the same on every retry of
that write and on a redelivered task, and differs between any two writes. Adapters read it with
`current()` and send it the way their service expects (an `Idempotency-Key` header for
memeval's own protocol and for TinyHumans). A context variable, because one engine serves
several cases at once and each asyncio task must see only its own write.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

HEADER = "Idempotency-Key"

_KEY: ContextVar[str | None] = ContextVar("memeval_write_key", default=None)


@contextmanager
def write_key(key: str) -> Iterator[None]:
    token = _KEY.set(key)
    try:
        yield
    finally:
        _KEY.reset(token)


def current() -> str | None:
    """The key of the write being made, or None outside a named write."""
    return _KEY.get()
