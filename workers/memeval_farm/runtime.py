"""Per-process worker state: one event loop, the engines and the results store.

Everything here is built after the worker process forks and is keyed by process id, because an
engine's sockets or a database handle inherited across a fork would be shared by two
processes. Engines are async and may be shared by concurrent cases (the threads pool), so each
process runs a single event loop in a background thread and every task submits its case to it.
The engine code itself is imported up front, so prefork children inherit it ready to use.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from celery.concurrency import prefork
from celery.signals import (
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from memeval.engines import registry
from memeval.engines.base import Engine
from memeval.secrets import redact
from memeval.store import RunStatus, Store, open_store

T = TypeVar("T")
log = logging.getLogger(__name__)
STATUS_TTL_S = 1.0


class WorkerRuntime:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._engines: dict[str, Engine] = {}
        self._store: Store | None = None
        self._status: dict[str, tuple[float, RunStatus | None]] = {}

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._pid != os.getpid() or self._loop is None:
                # Whatever a parent left behind belongs to the parent: forget it, never close it.
                self._loop = asyncio.new_event_loop()
                threading.Thread(
                    target=self._loop.run_forever, name="memeval-engines", daemon=True
                ).start()
                self._engines = {}
                self._store = None
                self._status = {}
                self._pid = os.getpid()
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run `coro` on this process's loop; on timeout it is cancelled and TimeoutError raised."""
        loop = self._ensure()
        future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(coro, timeout), loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def engine(self, name: str) -> Engine:
        self._ensure()
        with self._lock:
            if name not in self._engines:
                self._engines[name] = registry.create(name)
            return self._engines[name]

    @property
    def store(self) -> Store:
        self._ensure()
        with self._lock:
            if self._store is None:
                self._store = open_store()
            return self._store

    def run_status(self, run_id: str) -> RunStatus | None:
        """The run's status as of at most a second ago: asked before every case, it only
        catches the stragglers of a Ctrl-C that missed the revoke, and a second's delay costs
        nothing there, whereas a read per case was a fifth of a no-op case's cost."""
        now = time.monotonic()
        with self._lock:
            cached = self._status.get(run_id)
        if cached is not None and now - cached[0] < STATUS_TTL_S:
            return cached[1]
        status = self.store.run_status(run_id)
        with self._lock:
            self._status[run_id] = (now, status)
        return status

    def close(self) -> None:
        """Close this process's engines and connections; the next use starts afresh."""
        with self._lock:
            loop, engines, store = self._loop, list(self._engines.values()), self._store
            mine = self._pid == os.getpid()
            self._pid, self._loop, self._engines, self._store = None, None, {}, None
        if not mine or loop is None:
            return
        for engine in engines:
            with contextlib.suppress(Exception):  # best effort: the process is going away
                asyncio.run_coroutine_threadsafe(engine.close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        if store is not None:
            store.dispose()


RUNTIME = WorkerRuntime()


def warm() -> None:
    """Connect to the results store in the background as the process that runs cases starts,
    so the first round of cases finds it ready (or waits for this one connection) instead of
    each case connecting. In the background, because a slow store must delay neither the
    worker's readiness nor a prefork child's start, which Celery gives 4 s. A store that
    cannot be reached is left for the run's check to report, with its fix."""

    def connect() -> None:
        try:
            _ = RUNTIME.store.engine
        except Exception as exc:  # whatever the driver raises: the preflight names it
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            log.warning("the results store is not reachable yet: %s", redact(first))

    threading.Thread(target=connect, name="memeval-store-warm", daemon=True).start()


def settle() -> None:
    """Ready the process that runs cases: what it holds now (Celery, the engines' code, the
    app) lives as long as it does, so the collector is told to stop scanning it. A worker of
    16 threads otherwise paused every 2 to 4 s for a full collection of 90 to 125 ms, its
    16 cases stalled behind it; then the store connects (`warm`)."""
    gc.freeze()
    warm()


# Celery ships no type hints: its decorators make what they wrap untyped.
@worker_process_init.connect(weak=False)  # type: ignore[untyped-decorator]
def _after_fork(**_: Any) -> None:
    RUNTIME._ensure()
    settle()


@worker_ready.connect(weak=False)  # type: ignore[untyped-decorator]
def _on_ready(sender: Any = None, **_: Any) -> None:
    """A threads or gevent pool runs cases in this very process; a prefork pool's children
    settled themselves (`_after_fork`)."""
    if not isinstance(getattr(sender, "pool", None), prefork.TaskPool):
        settle()


@worker_process_shutdown.connect(weak=False)  # type: ignore[untyped-decorator]
@worker_shutdown.connect(weak=False)  # type: ignore[untyped-decorator]
def _on_shutdown(**_: Any) -> None:
    RUNTIME.close()
