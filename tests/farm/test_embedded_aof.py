"""The embedded Redis keeps its append-only file and compacts it only once it is large: a
LongMemEval-sized run streams its whole benchmark file through the queue."""

from __future__ import annotations

from pathlib import Path

import redis

from memeval_farm.embedded import EmbeddedFarm
from tests.farm.conftest import private_farm


def test_the_embedded_redis_logs_every_write_and_compacts_late(tmp_path: Path) -> None:
    with EmbeddedFarm(workers=1, pool="threads", env=private_farm(tmp_path).env) as embedded:
        client = redis.Redis(unix_socket_path=str(embedded.socket))
        try:
            assert client.config_get("appendonly") == {"appendonly": "yes"}
            minimum = client.config_get("auto-aof-rewrite-min-size")["auto-aof-rewrite-min-size"]
            assert int(minimum) == 512 * 1024 * 1024
            client.rpush("probe", b"x" * 1024)
        finally:
            client.close()
        assert (embedded.dir / "appendonly.aof").stat().st_size > 1024
