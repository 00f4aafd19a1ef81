"""What the hosted memory adapters (`zep`, `supermemory`) share: naming each stored item,
waiting for a service's own word that a write is searchable, and reading each write once (their
packs are `packs.SearchPacks`).

A named write (`idempotency.write_key`) may store several items: a history of N turns is one
write of the runner's, but N messages or documents at the service. Each item gets its own
identity, `key/tN` for the N-th, the same on every redelivery of the task and never shared by
two items: a service that deduplicates on it would otherwise answer turn 2 as a replay of turn 1.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from memeval.engines import idempotency
from memeval.engines.adapters.transport import RemoteError

T = TypeVar("T")


def write_id() -> str:
    """The running write's key, or a fresh one outside a named write."""
    return idempotency.current() or uuid.uuid4().hex


def item_ids(n: int) -> list[str]:
    """One identity per item of the running write, as the docstring above says."""
    key = write_id()
    return [f"{key}/t{i}" for i in range(n)]


def digest(key: str, prefix: str) -> str:
    """`key` as an id of `[A-Za-z0-9-]`, stable across redeliveries: write keys hold whatever
    a run label and a tenant hold, which no service's id grammar promises to take."""
    return f"{prefix}-{hashlib.sha256(key.encode()).hexdigest()[:40]}"


def distinct(items: Iterable[T], write_of: Callable[[T], str]) -> list[T]:
    """`items` in order, the first of each write only: a retried write stored twice, or a
    document answered both as a memory and as a chunk, shows once in a pack."""
    seen: set[str] = set()
    out = []
    for item in items:
        write = write_of(item)
        if write not in seen:
            seen.add(write)
            out.append(item)
    return out


async def until_done(
    state: Callable[[], Awaitable[bool | None]], what: str, wait: float, poll: float
) -> None:
    """Poll `state` (True done, False failed, None still queued) for at most `wait` seconds."""
    deadline = asyncio.get_running_loop().time() + wait
    while (done := await state()) is None:
        if asyncio.get_running_loop().time() > deadline:
            raise RemoteError(f"{what} still processing after {wait:g}s")
        await asyncio.sleep(poll)
    if not done:
        raise RemoteError(f"{what} failed to process")
