"""Separate network hosts on one machine: Linux network namespaces joined by veth pairs.

One namespace (`svc`) holds Redis, a private PostgreSQL and the engine (`memeval serve`), each
listening on its own loopback only; the dispatcher and every worker get a namespace of their
own, linked to `svc` by a veth pair, and reach the services through `tests.fleet_netns.proxy`,
which runs in `svc` on that link's address and adds the link's latency and jitter. Cutting a
link is `ip link set ... down` on the host's end: its traffic is dropped, not refused. Taking
a link down also deletes the routes through it, so mending it puts the host's route back: a
link brought up without it would leave the host able to hear but never to answer.

Addresses are 198.18.0.0/15's (RFC 2544's benchmarking range) and exist only inside these
namespaces: link k is 198.18.k.0/24, `svc` at .1, the host at .2; the proxy listens on
`SERVICE` (198.19.0.1, on `svc`'s loopback), which every host routes through its own link, so
one URL (the engine's travels inside every task) means the same service on every host.
Everything started here is stopped, and every namespace deleted, on the way out, failure or
not.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Self

ROOT = Path(__file__).resolve().parents[2]
REDIS_PORT, PG_PORT, ENGINE_PORT = 16379, 15432, 18080
START_TIMEOUT_S = 60.0
SERVICE = "198.19.0.1"


class NoNamespaces(Exception):
    """This machine cannot make network namespaces; the message says why."""


def why_not() -> str | None:
    """None when namespaces can be made here, else the reason."""
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    if not glob.glob("/usr/lib/postgresql/*/bin/postgres"):
        return "no PostgreSQL server under /usr/lib/postgresql/*/bin"
    if shutil.which("redis-server") is None:
        return "redis-server is not on PATH"
    probe = f"mfprobe{uuid.uuid4().hex[:6]}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip()}"
    return None


def ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


class Fleet:
    """`svc`, `disp` and `w1..wN`, linked in a star around `svc`; `start`/`cut` as needed."""

    def __init__(
        self,
        workers: int = 3,
        *,
        latency_ms: float = 2.0,
        jitter_ms: float = 1.0,
        drop: float = 0.0,
    ) -> None:
        tag = uuid.uuid4().hex[:4]
        self.tag = tag
        self.svc = f"mf{tag}-svc"
        self.hosts = [f"mf{tag}-disp", *(f"mf{tag}-w{n}" for n in range(1, workers + 1))]
        self.latency_ms, self.jitter_ms, self.drop = latency_ms, jitter_ms, drop
        self.dir = Path(tempfile.mkdtemp(prefix="memeval-netns-"))
        self.procs: list[subprocess.Popen[bytes]] = []
        self._logs: list[IO[bytes]] = []
        self._made: list[str] = []

    # --- addresses -------------------------------------------------------------------
    def link(self, host: str) -> int:
        return self.hosts.index(host) + 1

    def veth(self, host: str) -> str:
        return f"mf{self.tag}h{self.link(host)}"

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """What a dispatcher or a worker on any host is given."""
        return {
            **base,
            "MEMEVAL_BROKER_URL": f"redis://{SERVICE}:{REDIS_PORT}/0",
            "MEMEVAL_DATABASE_URL": f"postgresql+psycopg://postgres@{SERVICE}:{PG_PORT}/postgres",
        }

    engine_url = f"http://{SERVICE}:{ENGINE_PORT}"

    # --- lifecycle -------------------------------------------------------------------
    def __enter__(self) -> Self:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _build(self) -> None:
        for ns in [self.svc, *self.hosts]:
            ip("netns", "add", ns)
            self._made.append(ns)
            ip("-n", ns, "link", "set", "lo", "up")
        for host in self.hosts:
            k, veth = self.link(host), self.veth(host)
            near = f"mf{self.tag}s{k}"
            ip("link", "add", near, "netns", self.svc, "type", "veth", "peer", "name", veth,
               "netns", host)  # fmt: skip
            ip("-n", self.svc, "addr", "add", f"198.18.{k}.1/24", "dev", near)
            ip("-n", host, "addr", "add", f"198.18.{k}.2/24", "dev", veth)
            ip("-n", self.svc, "link", "set", near, "up")
            ip("-n", host, "link", "set", veth, "up")
            self._route(host)
        ip("-n", self.svc, "addr", "add", f"{SERVICE}/32", "dev", "lo")

    def spawn(
        self, ns: str, argv: list[str], name: str, env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        log = (self.dir / f"{name}.log").open("ab")
        self._logs.append(log)
        proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, *argv],
            cwd=ROOT,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def run(
        self, ns: str, argv: list[str], timeout: float = 60, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT, env=env)  # fmt: skip

    def log(self, name: str) -> str:
        path = self.dir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start_services(self, base_env: Mapping[str, str], engine: str, latency_ms: float) -> None:
        """Redis, PostgreSQL, the engine and the proxies, in `svc`; ready when this returns."""
        self.spawn(self.svc, ["redis-server", "--port", "6379", "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no"], "redis")  # fmt: skip
        self._start_postgres()
        self.spawn(self.svc, [sys.executable, "-m", "memeval", "serve", "--engine", engine,
                              "--port", "8080", "--latency-ms", f"{latency_ms:g}"], "serve",
                   {**base_env, "MEMEVAL_SERVE_TOKEN": base_env["MEMEVAL_HTTP_TOKEN"]})  # fmt: skip
        routes = [
            f"{SERVICE}:{port}=127.0.0.1:{inner}"
            for port, inner in ((REDIS_PORT, 6379), (PG_PORT, 5432), (ENGINE_PORT, 8080))
        ]
        self.spawn(self.svc, [sys.executable, "-m", "tests.fleet_netns.proxy",
                              "--latency-ms", f"{self.latency_ms:g}",
                              "--jitter-ms", f"{self.jitter_ms:g}",
                              "--drop", f"{self.drop:g}", *routes], "proxy",
                   base_env)  # fmt: skip
        self._wait(self.svc, ["redis-cli", "-h", "127.0.0.1", "-p", "6379", "ping"], "redis")
        self._wait(self.svc, [sys.executable, "-c", _HTTP_UP], "serve")
        for host in self.hosts:
            self._wait(host, ["redis-cli", "-h", SERVICE, "-p", str(REDIS_PORT), "ping"], "proxy")

    def start_workers(self, base_env: Mapping[str, str], threads: int) -> list[str]:
        """A `memeval worker` in each worker namespace, logging as `worker0`...; returns
        their namespaces once every one is ready."""
        workers = self.hosts[1:]
        for n, host in enumerate(workers):
            self.spawn(host, [sys.executable, "-m", "memeval", "worker", "--workers",
                              str(threads), "--pool", "threads", "--loglevel", "INFO"],
                       f"worker{n}", self.env(base_env))  # fmt: skip
        for n in range(len(workers)):
            self.wait_for_log(f"worker{n}", " ready.")
        return workers

    def wait_for_log(self, name: str, text: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while text not in self.log(name):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} never logged {text!r}:\n{self.log(name)[-2000:]}")
            time.sleep(0.3)

    def _start_postgres(self) -> None:
        bindir = Path(sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1])
        data = self.dir / "pg"
        data.mkdir()
        shutil.chown(data, "postgres", "postgres")
        os.chmod(self.dir, 0o755)
        init = subprocess.run(["runuser", "-u", "postgres", "--", str(bindir / "initdb"), "-D",
                               str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stderr.strip()[-500:]}")
        self.spawn(self.svc, ["runuser", "-u", "postgres", "--", str(bindir / "postgres"),
                              "-D", str(data), "-k", str(data), "-p", "5432",
                              "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
                              "-c", "max_connections=200"], "postgres")  # fmt: skip
        self._wait(self.svc, [str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", "5432"],
                   "postgres")  # fmt: skip

    def _wait(self, ns: str, probe: list[str], name: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            with contextlib.suppress(subprocess.TimeoutExpired):
                if self.run(ns, probe, timeout=10).returncode == 0:
                    return
            time.sleep(0.3)
        tail = self.log(name)[-2000:]
        raise RuntimeError(f"{name} did not come up in {START_TIMEOUT_S:g}s:\n{tail}")

    def cut(self, host: str) -> None:
        ip("-n", host, "link", "set", self.veth(host), "down")

    def mend(self, host: str) -> None:
        ip("-n", host, "link", "set", self.veth(host), "up")
        self._route(host)

    def _route(self, host: str) -> None:
        """The host's way to `SERVICE`, through its link."""
        via = f"198.18.{self.link(host)}.1"
        ip("-n", host, "route", "replace", f"{SERVICE}/32", "via", via, "dev", self.veth(host))

    def close(self) -> None:
        for proc in reversed(self.procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.1, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for ns in self._made:  # anything still inside was started by us
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
            for pid in pids.stdout.split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        for log in self._logs:
            log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_HTTP_UP = (
    "import httpx,sys; sys.exit(httpx.get('http://127.0.0.1:8080/openapi.json', timeout=2)"
    ".status_code != 200)"
)
