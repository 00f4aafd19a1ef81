"""How the embedded farm starts, forks and stops its child processes.

Each child gets its own session, so a Ctrl-C in the terminal reaches only `memeval run`, which
then decides what to stop and how; on Linux each child is also told to die with its parent, so
even a `kill -9` of `memeval run` leaves no orphan behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
NODE_NAME = "memeval-node"


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).prctl


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec hook asking Linux to SIGKILL the child when its parent dies."""
    prctl = _prctl()
    if prctl is None:
        return None

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return hook


def name_process(name: str) -> None:
    """Name this process (and the pool processes it forks) for `ps -e`, `top` and /proc: a
    forked node's command line is the `memeval run` it came from."""
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_NAME, name.encode()[:15])


def spawn(
    argv: list[str], log: IO[bytes], env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(env) if env is not None else None,
        start_new_session=True,
        preexec_fn=_die_with_parent(),
    )


class Forked:
    """A child forked from this process, waited for as a `subprocess.Popen` is."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("memeval_farm.node", timeout or 0.0)
            time.sleep(0.02)
        return code


Child = subprocess.Popen[bytes] | Forked


def can_fork() -> bool:
    """Whether the node may be forked from this process rather than started afresh.

    A fork shares what this process has imported (Celery, the store, the engines: most of a
    node's start-up CPU), but only a process with one thread, native ones included, can fork
    safely, and only before prometheus-client is imported, which fixes its multiprocess mode
    at import. `memeval run` forks; a run inside a threaded program (a test runner, a
    notebook, or after a library started a thread pool) starts a fresh interpreter instead.
    """
    if not sys.platform.startswith("linux") or "prometheus_client" in sys.modules:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def fork_node(argv: list[str], log: IO[bytes], env: Mapping[str, str]) -> Forked:
    """`memeval_farm.node.main(argv)` in a forked child set up as `spawn` sets up its children.

    The child never returns into this process's frames: it leaves through `os._exit`, so
    nothing of the parent's (its store's connections, its atexit hooks) is closed or run twice.
    """
    pid = os.fork()
    if pid:
        return Forked(pid)
    code = 70
    try:
        os.setsid()
        hook = _die_with_parent()
        if hook is not None:
            hook()
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        # typeshed marks `sys.__stdout__` Final; a detached child must rebind it to its log.
        sys.stdout = sys.__stdout__ = open(1, "w", buffering=1, closefd=False)  # type: ignore[misc]  # noqa: SIM115
        sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, closefd=False)  # type: ignore[misc]  # noqa: SIM115
        for sig in (signal.SIGTERM, signal.SIGQUIT, signal.SIGHUP, signal.SIGUSR1):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(env)
        from memeval_farm import node

        code = node.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def stop(
    proc: Child,
    sig: signal.Signals,
    timeout: float,
    settled: Callable[[], bool] | None = None,
) -> None:
    """Signal the child's whole process group, then SIGKILL what is left after `timeout`, or
    as soon as `settled()` says nothing in it is worth waiting for."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        if settled is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout)
        else:
            deadline = time.monotonic() + timeout
            while proc.poll() is None and not settled() and time.monotonic() < deadline:
                time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # prefork children left in the group
    proc.wait()


def busy_children(pid: int, exited: Path) -> bool:
    """Whether `pid` has a child that has not finished its shutdown hooks, from every one of
    its threads' lists (billiard forks replacements from a thread). Past its hooks, a pool
    process only sleeps a second in billiard before it exits (`Worker._do_exit`), so a child
    that marked itself in `exited`, or is a zombie, has nothing left worth waiting for."""
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            for child in (task / "children").read_text().split():
                if not (exited / child).exists() and _alive(child):
                    return True
    return False


def _alive(pid: str) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:  # reaped meanwhile
        return False
    return state != "Z"
