"""Farm tests run the real thing: `memeval` commands in subprocesses, real Celery workers, the
embedded Redis, and the machine's Redis on 127.0.0.1:6379. On the shared Redis each test gets
its own key namespace (`MEMEVAL_NAMESPACE`), so test runs on one machine never meet. A Redis
that cannot be reached fails the tests that need it, loudly.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

ROOT = Path(__file__).resolve().parents[2]
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
REDIS_DB = 7


def _strip_farm_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEVAL_")}
    env.pop("PYTHONPATH", None)
    return env


def _ctrl_c_as_in_a_terminal() -> None:
    """A command typed at a terminal gets SIGINT's default action. A shell starting pytest in
    the background ignores SIGINT instead, and every child would inherit that; a test sending
    Ctrl-C would then see a run that never heard it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class Farm:
    """Runs `memeval` the way a user would, with a private store and report folder."""

    tmp: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def db(self) -> Path:
        return self.tmp / "store" / "memeval.db"

    @property
    def marks(self) -> Path:
        return self.tmp / "marks"

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "memeval", *args]

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*args),
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self, *args: str, log: str = "run.log") -> subprocess.Popen[str]:
        handle = (self.tmp / log).open("w")
        return subprocess.Popen(
            self.argv(*args),
            cwd=ROOT,
            env=self.env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=_ctrl_c_as_in_a_terminal,
        )

    def report(self, label: str) -> dict:
        return json.loads((self.tmp / "out" / label / "report.json").read_text())

    def rows(self, sql: str, *params: object) -> list[tuple]:
        with sqlite3.connect(self.db) as connection:
            return connection.execute(sql, params).fetchall()

    def has_results(self) -> bool:
        """True once some case result is stored; the store may not have made its tables yet."""
        try:
            return self.db.exists() and bool(self.rows("select 1 from case_results limit 1"))
        except sqlite3.OperationalError:
            return False


def private_farm(tmp_path: Path) -> Farm:
    """`memeval` with a store, marks folder and report folder of its own under `tmp_path`."""
    (tmp_path / "marks").mkdir()
    env = _strip_farm_env()
    env.update(
        PYTHONPATH=str(ROOT),
        MEMEVAL_DATABASE_URL=f"sqlite:///{tmp_path / 'store' / 'memeval.db'}",
        MEMEVAL_TEST_MARKS=str(tmp_path / "marks"),
        MEMEVAL_QUIET_AFTER="1",
        MEMEVAL_POLL_INTERVAL="0.2",
        COLUMNS="200",
    )
    return Farm(tmp_path, env)


@pytest.fixture
def farm(tmp_path: Path) -> Farm:
    """The embedded farm: no broker URL, so `memeval run` starts its own Redis and worker."""
    return private_farm(tmp_path)


@pytest.fixture
def namespace() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
def redis_url(namespace: str) -> Iterator[str]:
    """The machine's Redis; afterwards every key of this test's namespace is deleted."""
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.ConnectionError as exc:
        pytest.fail(
            f"Redis is unreachable at {REDIS_HOST}:{REDIS_PORT} ({exc}). The farm tests need a "
            "real one: start redis-server there (.ci/run does).",
            pytrace=False,
        )
    yield f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"
    for key in client.scan_iter(f"{namespace}:*"):
        client.delete(key)
    client.close()


@pytest.fixture
def shared(farm: Farm, redis_url: str, namespace: str) -> Farm:
    """The distributed farm: `memeval run` only dispatches to the machine's Redis."""
    farm.env.update(MEMEVAL_BROKER_URL=redis_url, MEMEVAL_NAMESPACE=namespace)
    return farm


def proc_file(pid: int, name: str) -> bytes:
    """/proc/PID/NAME (`cmdline`, `comm`, `environ`), or nothing once the process is gone."""
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes()
    except OSError:
        return b""


def process_name(pid: int) -> str:
    """What `ps -e` shows: the name a process gave itself, or its program's."""
    return proc_file(pid, "comm").decode().strip()


def stat(pid: int | str) -> list[str]:
    """/proc/PID/stat after the command name: state, parent pid, ...; OSError once it is gone."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def children(pid: int) -> list[int]:
    """Every descendant of `pid`, read from /proc."""
    parents: dict[int, list[int]] = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            parents.setdefault(int(stat(proc.name)[1]), []).append(int(proc.name))
        except OSError:
            continue
    found, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def alive(pid: int) -> bool:
    try:
        return stat(pid)[0] != "Z"
    except OSError:
        return False


def wait_for(check: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
