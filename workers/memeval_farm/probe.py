"""`python -m memeval_farm.probe`: is this worker's broker reachable? For a Kubernetes readiness
probe, where "the process is up" means nothing if the cases cannot reach it.

A worker that cannot reach its broker takes no case, so it must leave the ready set: the probe
pings the broker named by the worker's own settings and exits 0 only on an answer within the
timeout. It imports no Celery and no engine, so it costs a Redis round trip, not a start-up.
"""

from __future__ import annotations

import sys

import redis

from memeval_farm.settings import load_settings

TIMEOUT = 2.0


def broker_answers(url: str, timeout: float = TIMEOUT) -> bool:
    client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def main() -> int:
    url = load_settings().broker_url
    if not url or not url.startswith(("redis://", "rediss://", "unix://")):
        print("MEMEVAL_BROKER_URL must name the farm's Redis", file=sys.stderr)
        return 1
    if not broker_answers(url):
        print("the broker does not answer", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
