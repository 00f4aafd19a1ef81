"""Real Redis on 127.0.0.1:6379 for the budget and limiter tests: a unique tag per test keeps
concurrent test runs apart, and every key carrying the tag is deleted afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis

REDIS_URL = "redis://127.0.0.1:6379/0"


def require_redis() -> None:
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.fail(
            f"these tests need a real Redis on 127.0.0.1:6379 and none answered ({exc}); "
            "start one with `redis-server --daemonize yes`",
            pytrace=False,
        )
    finally:
        client.close()


def tagged_keys() -> Iterator[str]:
    """A unique tag for this test; its keys are removed when the test ends."""
    require_redis()
    tag = uuid.uuid4().hex[:12]
    yield tag
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"*{tag}*", count=500))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
