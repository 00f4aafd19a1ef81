"""A stable idempotency key for every write, so a retried write is stored once.

A write whose response timed out may well have been stored; the transport retries it, and
without a key the engine stores it twice. The runner names each write (`write_key`) from the
run, case, trial and the write's index within the case; the key is the same on every retry of
that write and on a redelivered task, and differs between any two writes. Adapters read it with
`request_key()` (one per request a write sends) or `current()`, and send it the way their
service expects (an `Idempotency-Key` header for memeval's own protocol and for TinyHumans).
A `write_history` of N turns is one named write holding N stored turns: each turn is made
under `part(index)`, so turn 3 of write 7 is keyed `tenant:7/t3`, whichever adapter sends it;
one key for every turn would make the engine answer turn 2 as a replay (or a conflict) of turn 1.
A context variable, because one engine serves several cases at once and each asyncio task
must see only its own write.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

HEADER = "Idempotency-Key"


@dataclass
class _Write:
    key: str
    requests: int = 0


_KEY: ContextVar[_Write | None] = ContextVar("memeval_write_key", default=None)


@contextmanager
def write_key(key: str) -> Iterator[None]:
    token = _KEY.set(_Write(key))
    try:
        yield
    finally:
        _KEY.reset(token)


@contextmanager
def part(index: int) -> Iterator[None]:
    """Name the `index`-th stored item of the write being made (a turn of a history); outside
    a named write, nothing is named and adapters fall back to a fresh key."""
    write = _KEY.get()
    if write is None:
        yield
        return
    token = _KEY.set(_Write(f"{write.key}/t{index}"))
    try:
        yield
    finally:
        _KEY.reset(token)


def current() -> str | None:
    """The key of the write being made, or None outside a named write."""
    write = _KEY.get()
    return None if write is None else write.key


def request_key() -> str | None:
    """The key for the next request the write sends: the write's own key for its first, then
    `key/1`, `key/2`...: one engine call may send several (a `write_history` made of one
    `post_turn` per turn), and each must be told apart, yet named the same on a redelivery,
    where the call sends them again in the same order. A transport retry resends the request
    it already named, so it keeps its key."""
    write = _KEY.get()
    if write is None:
        return None
    n, write.requests = write.requests, write.requests + 1
    return write.key if n == 0 else f"{write.key}/{n}"
