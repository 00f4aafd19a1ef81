"""Which attempt at a case this execution is, counted in the farm's Redis.

The attempt names the case's engine tenant (`-a{attempt}`), so each execution must get a new
one. Celery's retry count is not enough: a message redelivered because its pool child was
killed mid-case comes back with the same count, and ran again on the tenant the dead child
had half written.
"""

from __future__ import annotations

import redis

from memeval_farm.broker import BROKER_FAULTS

KEY_TTL_S = 30 * 24 * 3600


def next_attempt(client: redis.Redis | None, prefix: str, key: str, retries: int) -> int:
    """0 on a case's first execution, one more on each later one (retry, redelivery, resume);
    Celery's `retries` when there is no Redis to count in, or it does not answer."""
    if client is None:
        return retries
    name = f"{prefix}memeval:attempts:{key}"
    try:
        with client.pipeline() as pipe:
            pipe.incr(name)
            pipe.expire(name, KEY_TTL_S)
            count, _ = pipe.execute()
    except BROKER_FAULTS:
        return retries
    return max(retries, int(count) - 1)
