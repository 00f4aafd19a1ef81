"""A run stopped for every worker at once because the engine's account cannot pay (HTTP 402).

No later case can succeed, so running them would only turn each into the same error, slowly.
The worker whose case met the 402 raises the run's flag in the farm's Redis, where every worker
on every machine looks before it starts a case; a flagged run's cases are stored as
`skipped_credits` without touching the engine, so they all land at once, the run ends with one
message, and `--resume` sends them again once the account is topped up. Workers read the flag
at most once a second each: a case that starts in that second meets the 402 itself.
"""

from __future__ import annotations

import threading
import time

import redis

from memeval_farm.broker import BROKER_FAULTS

KEY_TTL_S = 7 * 24 * 3600
CACHE_S = 1.0


class Halts:
    """The flags of the runs this process works for, read through a one-second cache."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, str | None]] = {}
        self._first: dict[str, list[str]] = {}

    def key(self, run_id: str) -> str:
        return f"{self.prefix}memeval:halted:{run_id}"

    def raise_flag(self, client: redis.Redis | None, run_id: str, reason: str) -> None:
        """The first reason stays: it is the one the run's message quotes. Without a Redis
        (an app with no result backend, as in eager tests) the flag is this process's alone."""
        if client is not None:
            client.set(self.key(run_id), reason, ex=KEY_TTL_S, nx=True)
        with self._lock:
            self._seen[run_id] = (time.monotonic(), reason)

    def land(
        self, client: redis.Redis | None, run_id: str, signature: str | None, limit: int
    ) -> int | None:
        """Count a landed case toward the run's first `limit` (`signature`: the refusal it
        ended on, None for any other outcome); once they are all in and refused alike, how
        many. A list in the farm's Redis, since the first cases land on different workers."""
        key = f"{self.prefix}memeval:first:{run_id}"
        if limit <= 0:
            return None
        if client is None:
            with self._lock:
                seen = self._first.setdefault(run_id, [])
                if len(seen) < limit:
                    seen.append(signature or "")
                firsts = list(seen) if len(seen) == limit else []
        else:
            if client.llen(key) >= limit:
                return None
            if client.rpush(key, signature or "") != limit:
                return None
            client.expire(key, KEY_TTL_S)
            firsts = [x.decode() if isinstance(x, bytes) else x for x in client.lrange(key, 0, -1)]
        if firsts and "" not in firsts and len(set(firsts)) == 1:
            return limit
        return None

    def reason(self, client: redis.Redis | None, run_id: str) -> str | None:
        """Why the run is halted, or None. A Redis that does not answer halts nothing: the
        case then runs, and meets the 402 itself if the account is still spent."""
        now = time.monotonic()
        with self._lock:
            cached = self._seen.get(run_id)
        if cached is not None and (client is None or now - cached[0] < CACHE_S):
            return cached[1]
        if client is None:
            return None
        try:
            raw = client.get(self.key(run_id))
        except BROKER_FAULTS:
            return None
        value = raw.decode() if isinstance(raw, bytes) else raw
        with self._lock:
            self._seen[run_id] = (now, value)
        return value
