"""The server's side of idempotency keys: a keyed write runs once; a repeat gets its answer.

A client that timed out waiting for a write's response cannot know whether it was stored, so
it sends the write again with the same `Idempotency-Key`. The first answer to each key is kept
per tenant and given to every repeat without calling the engine again; a repeat that arrives
while the first is still running waits for it. Only answers are kept, never failures: a write
that failed may not have happened, and its retry must be allowed to make it. Keys are scoped
to their tenant, dropped when the tenant is forgotten (a case rerun on the same tenant after
a forget must store again), and the oldest are dropped past `limit`, so memory stays bounded.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

T = TypeVar("T")


class KeyReused(Exception):
    """The key was first used for a different request: a client bug, refused, never replayed."""


@dataclass
class _Slot:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    fingerprint: str | None = None
    answer: Any = None
    done: bool = False


class Replays:
    def __init__(self, limit: int = 100_000) -> None:
        self._limit = limit
        self._slots: OrderedDict[tuple[str, str], _Slot] = OrderedDict()
        self._keys: dict[str, set[str]] = {}  # by tenant, so a forget does not scan them all

    async def once(
        self, tenant: str, key: str | None, body: BaseModel, write: Callable[[], Awaitable[T]]
    ) -> T:
        """`write()`'s answer, from the engine the first time `key` is seen for `tenant`."""
        if key is None:
            return await write()
        fingerprint = hashlib.sha256(body.model_dump_json().encode()).hexdigest()
        slot = self._slots.setdefault((tenant, key), _Slot())
        self._keys.setdefault(tenant, set()).add(key)
        self._slots.move_to_end((tenant, key))
        async with slot.lock:
            if slot.done:
                if slot.fingerprint != fingerprint:
                    raise KeyReused(f"Idempotency-Key `{key}` was first sent with another body")
                return slot.answer  # type: ignore[no-any-return]
            answer = await write()
            slot.fingerprint, slot.answer, slot.done = fingerprint, answer, True
        self._trim()
        return answer

    def forget(self, tenant: str) -> None:
        for key in self._keys.pop(tenant, set()):
            self._slots.pop((tenant, key), None)

    def _trim(self) -> None:
        while len(self._slots) > self._limit:
            (tenant, key), slot = next(iter(self._slots.items()))
            if slot.lock.locked():
                return  # a write still running keeps its slot; the next trim takes it
            del self._slots[(tenant, key)]
            self._keys[tenant].discard(key)
