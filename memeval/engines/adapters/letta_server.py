"""Letta's agent server as a managed child of the process that runs the engine.

The server is started the way a user starts it (`letta server`), by whichever Python holds the
`letta` package (this one by default, or another environment's: Letta's server pins packages
memeval's other engines need newer), on a free port of 127.0.0.1 only. Everything it keeps,
its SQLite database and its configuration, lives in a private folder that is its home, so two
engines never share a store and nothing is read from the user's `~/.letta`.

Its environment is built, not inherited: the few variables a Python needs, and the settings
that point its models at memeval's model service. So no vendor key, `SENTRY_DSN`, OpenTelemetry
endpoint or Postgres URI of the user's reaches it, and it phones nowhere (composio, which
Letta imports, has its version check and Sentry switched off). tiktoken, which Letta
counts tokens with, finds its encodings in a cache filled from `bpe-openai`.

It stops when the engine closes, and with the thread that started it if the worker dies first
(Linux's parent-death signal), as Celery's own pool children do.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import signal
import socket
import sqlite3
import sys
from pathlib import Path

import httpx

from memeval.engines.adapters.tiktoken_offline import tiktoken_cache
from memeval.errors import EngineUnavailable

# `letta server`, as its console script runs it; `-c` so any Python with letta can, whatever
# its scripts folder.
START = "from letta.main import app; app()"
# What a Python needs from the parent's environment; PYTHONPATH so a site hook can reach it.
PASSED = ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH", "TMPDIR")
PR_SET_PDEATHSIG = 1
# Letta 0.11.7 declares this table's `created_at` default as the string 'now()' (Postgres's
# function): on SQLite the first archival insert of every agent stores that string and fails
# reading it back ("Invalid isoformat string: 'now()'"), so no passage is ever written. The
# table is created here, before the server starts, exactly as Letta's model compiles for
# SQLite but with SQLite's own clock as the default; Letta's `create_all` keeps tables that
# exist and creates every other one itself.
ARCHIVES_AGENTS = """
CREATE TABLE archives_agents (
    agent_id VARCHAR NOT NULL,
    archive_id VARCHAR NOT NULL,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP NOT NULL,
    is_owner BOOLEAN NOT NULL,
    PRIMARY KEY (agent_id, archive_id),
    CONSTRAINT unique_agent_archive UNIQUE (agent_id),
    FOREIGN KEY(agent_id) REFERENCES agents (id) ON DELETE CASCADE,
    FOREIGN KEY(archive_id) REFERENCES archives (id) ON DELETE CASCADE
)
"""
LOG_TAIL = 1_500


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """Runs in the child before Letta: SIGTERM when the thread that started it ends."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class LettaServer:
    def __init__(
        self, python: str, folder: Path, model_url: str, model_key: str, start_timeout: float
    ) -> None:
        self.python = python
        self.folder = folder
        self.model_url = model_url
        self.model_key = model_key
        self.start_timeout = start_timeout
        self.url: str | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._log = folder / "letta-server.log"

    def environment(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in PASSED if k in os.environ}
        env.update(
            HOME=str(self.folder),  # Letta reads `~/.letta/pg_uri`: a home of its own has none
            LETTA_DIR=str(self.folder / ".letta"),  # its SQLite database is `sqlite.db` there
            TIKTOKEN_CACHE_DIR=str(tiktoken_cache(self.folder / "tiktoken")),
            # Letta's OpenAI client (for the agent's models) and its OpenAI provider (listed
            # at start-up) read these: both reach the model service, nothing else.
            OPENAI_API_KEY=self.model_key,
            OPENAI_API_BASE=self.model_url,
            HF_HUB_OFFLINE="1",
            # composio (a dependency Letta imports) asks PyPI for its latest version and
            # backend.composio.dev for a Sentry DSN, each from a thread at import.
            COMPOSIO_DISABLE_VERSION_CHECK="true",
            COMPOSIO_DISABLE_SENTRY="true",
            PYTHONUNBUFFERED="1",
        )
        return env

    async def start(self) -> str:
        """The server's base URL once it answers its health check."""
        if self.url is not None:
            return self.url
        port = free_port()
        home = self.folder / ".letta"
        home.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(sqlite3.connect(home / "sqlite.db")) as db, db:
            db.execute(ARCHIVES_AGENTS)
        with self._log.open("wb") as log:
            self._proc = await asyncio.create_subprocess_exec(
                self.python,
                "-c",
                START,
                "server",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                cwd=self.folder,
                env=self.environment(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                preexec_fn=_die_with_parent,
            )
        atexit.register(self._kill)
        url = f"http://127.0.0.1:{port}"
        await self._until_healthy(url)
        self.url = url
        return url

    async def _until_healthy(self, url: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.start_timeout
        async with httpx.AsyncClient(timeout=5.0) as client:
            while loop.time() < deadline:
                if self._proc is None or self._proc.returncode is not None:
                    raise EngineUnavailable(f"letta: the server exited at start: {self.tail()}")
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(f"{url}/v1/health/")).status_code == 200:
                        return
                await asyncio.sleep(0.5)
        await self.stop()
        raise EngineUnavailable(
            f"letta: the server did not answer within {self.start_timeout:.0f} s: {self.tail()}"
        )

    def tail(self) -> str:
        """The end of the server's log, for an error that says why it stopped."""
        try:
            text = self._log.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return " | ".join(line for line in text[-LOG_TAIL:].splitlines() if line.strip())

    async def stop(self) -> None:
        proc, self._proc, self.url = self._proc, None, None
        if proc is None or proc.returncode is not None:
            return
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 15)
        except TimeoutError:
            proc.kill()
            await proc.wait()

    def _kill(self) -> None:
        """At interpreter exit, for an engine never closed: the server must not outlive us."""
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
