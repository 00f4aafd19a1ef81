"""The broker and the store as infrastructure: each test owns a real `redis-server` on a private
port (so it can stop, kill and restart it without touching anyone else's Redis), real
`memeval worker` processes, and `memeval run` in a subprocess, as a user would run them.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from memeval_farm.embedded import redis_executable
from tests.farm.conftest import Farm, private_farm, stop
from tests.farm.conftest import farm as farm  # the embedded farm, for tests here too

START_TIMEOUT_S = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PrivateRedis:
    """A redis-server on 127.0.0.1:`port`, its files in `folder`; restarts keep both."""

    def __init__(self, folder: Path, *, append_only: bool) -> None:
        self.folder = folder
        self.port = free_port()
        self.append_only = append_only
        self.proc: subprocess.Popen[bytes] | None = None
        folder.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        argv = [
            redis_executable(),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.folder),
            "--save", "",
            "--appendonly", "yes" if self.append_only else "no",
            "--loglevel", "warning",
        ]  # fmt: skip
        log = (self.folder / "redis.log").open("ab")
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=1)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(redis.ConnectionError):
                if client.ping():
                    client.close()
                    return
            if time.monotonic() > deadline:
                raise AssertionError(f"redis-server did not start on {self.port}")
            time.sleep(0.05)

    def stop(self) -> None:
        """A clean shutdown: the append-only file, if any, is complete."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def queued(self, queue: str = "memeval") -> int:
        client = redis.Redis(host="127.0.0.1", port=self.port)
        try:
            return int(client.llen(queue))
        finally:
            client.close()

    def run_id(self) -> str:
        client = redis.Redis(host="127.0.0.1", port=self.port)
        try:
            return str(client.info("server")["run_id"])
        finally:
            client.close()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path / "redis", append_only=True)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fleet(tmp_path: Path, private_redis: PrivateRedis) -> Farm:
    """`memeval run` only dispatches, to the private Redis; workers are started by the test."""
    farm = private_farm(tmp_path)
    farm.env["MEMEVAL_BROKER_URL"] = private_redis.url
    return farm


@contextlib.contextmanager
def worker(
    farm: Farm, *extra: str, log: str = "worker.log", concurrency: int = 2
) -> Iterator[subprocess.Popen[str]]:
    """A `memeval worker` of `concurrency` processes, stopped (warm) afterwards."""
    proc = farm.start(
        "worker", "--concurrency", str(concurrency), "--loglevel", "WARNING", *extra, log=log
    )
    try:
        yield proc
    finally:
        stop(proc)


def wait_ready(farm: Farm, log: str = "worker.log", timeout: float = 30.0) -> None:
    """Until the worker answers a ping on the farm's broker."""
    from memeval_farm.config import make_app
    from memeval_farm.settings import FarmSettings

    app = make_app(FarmSettings(broker_url=farm.env["MEMEVAL_BROKER_URL"]))
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if app.control.ping(timeout=0.5):
                return
        raise AssertionError(
            f"no worker answered within {timeout:g}s:\n{(farm.tmp / log).read_text()}"
        )
    finally:
        app.close()


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A throwaway PostgreSQL database of this test's own, dropped afterwards."""
    import psycopg
    from psycopg import sql

    from tests.store.conftest import PG_ADMIN_URL, _pg_admin

    name = f"memeval_infra_{uuid.uuid4().hex[:12]}"
    with _pg_admin() as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(PG_ADMIN_URL)
    host, port = info.get("host", "127.0.0.1"), info.get("port", "5432")
    yield f"postgresql://{info['user']}@{host}:{port}/{name}"
    with _pg_admin() as admin:
        admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
