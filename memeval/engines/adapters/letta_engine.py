"""`letta`: Letta's agent server as a child process, driven through its `letta-client` SDK.

Each tenant is one Letta agent; its archival memory is the store. Every write is a passage
inserted through the client (`agents.passages.create`, with the write's time as the passage's
`created_at`), which Letta chunks and embeds with the agent's embedding configuration; every
read is Letta's own archival search (`agents.passages.search`), the same retrieval the agent's
`archival_memory_search` tool runs. Reset and forget delete the tenant's agent, and with it
its passages; the next write makes a new one.

The agent's embedder and LLM are the OpenAI-compatible service `url` names (`memeval models
serve` by default). Nothing here goes through the agent's LLM loop (`agents.messages.create`):
the stand-in chat model answers no tool calls, and a Letta agent reads and writes its memory
only by calling tools, so messages would be written to recall memory but never searchable by
anything memeval could ask. The LLM is configured (Letta requires it) and never called.

The server (see `letta_server`) is Letta 0.11.7, the last release whose server keeps its
database in SQLite: from 0.12 on it runs on Postgres with pgvector only, and the wheel ships
no schema migrations. It starts on the engine's first call, not in `preflight` (it takes tens
of seconds), and stops when the engine closes.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import shutil
import sys
import uuid
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import Field
from pydantic_settings import SettingsConfigDict

from memeval.engines import idempotency
from memeval.engines.adapters.letta_server import LettaServer
from memeval.engines.adapters.library import Ledger
from memeval.engines.pack import PACK_K
from memeval.engines.types import Assertion, Capability, Hit, MemoryItem, QueryResult, Turn
from memeval.errors import EngineUnavailable, UsageError
from memeval.models import NOTE
from memeval.models.local import (
    ModelSettings,
    SearchPacks,
    check_models,
    library_missing,
    said,
    store_folder,
)

if TYPE_CHECKING:
    from letta_client import AsyncLetta

LIST_PAGE = 1_000
# Letta's agent needs a context window to be created; the stand-in model has no real one.
CONTEXT_WINDOW = 32_000
SERVER_VERSION = "0.11.7"


class LettaSettings(ModelSettings):
    # Not `LETTA_`: Letta's server reads `LETTA_*` itself, and the SDK reads `LETTA_API_KEY`
    # as a key for Letta's cloud.
    model_config = SettingsConfigDict(env_prefix="LETTA_ENGINE_")
    engine = "letta"

    server_python: str | None = Field(
        default=None,
        description="Python of an environment holding Letta's server (`letta==0.11.7`); "
        "default: this one.",
    )
    start_timeout: float = Field(
        default=300.0, gt=0, description="Seconds the server may take to start."
    )


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _import() -> None:
    if importlib.util.find_spec("letta_client") is None:
        raise library_missing("letta", "letta_client", "letta")


def agent_name(tenant: str) -> str:
    """The tenant, in the characters Letta allows in a name (letters, digits, space, `-`,
    `_`): names are for people reading Letta's listing, the engine keeps the agents' ids."""
    return re.sub(r"[^A-Za-z0-9 _-]", "-", f"memeval-{tenant}")[:200]


class LettaEngine(SearchPacks):
    name = "letta"
    settings_model = LettaSettings
    verified_against = (
        f"letta {SERVER_VERSION} server on SQLite, a child process on 127.0.0.1, through "
        f"letta-client {_version('letta-client')}"
    )
    capabilities = frozenset({Capability.store, Capability.lifecycle})
    notes = (
        "Letta's server as a child process (SQLite in a private folder); one agent per "
        "tenant, archival memory written and searched through letta-client",
        "no agent LLM loop: writes are archival passages, reads Letta's archival search",
        "no abstention (the search has no score floor), no provenance, no point-in-time queries",
        f"on the default url, {NOTE}",
    )

    def __init__(self, settings: LettaSettings) -> None:
        self.settings = settings
        self.folder: Path | None = None
        self._server: LettaServer | None = None
        self._client: AsyncLetta | None = None
        self._agents: dict[str, str] = {}
        self._ledger = Ledger()
        self._lock = asyncio.Lock()

    async def preflight(self) -> None:
        python = self.settings.server_python
        if python is not None and not os.access(python, os.X_OK):
            raise UsageError(
                f"engine `letta`: server_python `{python}` is not an executable Python",
                fix=f"set {self.settings.env_name('server_python')} to the `python` of an "
                "environment with 'letta[server,sqlite]==0.11.7'",
            )
        _import()
        if python is None and importlib.util.find_spec("letta") is None:
            raise library_missing("letta", "letta", "letta")
        await check_models(self.name, self.settings)

    async def close(self) -> None:
        server, self._server, self._client = self._server, None, None
        self._agents = {}
        if server is not None:
            await server.stop()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    async def _open(self) -> AsyncLetta:
        async with self._lock:
            if self._client is None:
                _import()
                from letta_client import AsyncLetta

                s = self.settings
                self.folder = store_folder(self.name, s.store_dir)
                server = LettaServer(
                    s.server_python or sys.executable, self.folder, s.url, s.key, s.start_timeout
                )
                self._server = server
                url = await server.start()
                self._client = AsyncLetta(base_url=url, timeout=s.timeout)
            return self._client

    async def _agent(self, tenant: str, create: bool = True) -> str | None:
        if tenant in self._agents or not create:
            return self._agents.get(tenant)
        from letta_client import EmbeddingConfig, LlmConfig

        client = await self._open()
        s = self.settings
        async with self._lock:
            if tenant not in self._agents:
                agent = await self._call(
                    client.agents.create(
                        name=agent_name(tenant),
                        memory_blocks=[],
                        include_base_tools=False,
                        llm_config=LlmConfig(
                            model=s.llm_model,
                            model_endpoint_type="openai",
                            model_endpoint=s.url,
                            context_window=CONTEXT_WINDOW,
                        ),
                        embedding_config=EmbeddingConfig(
                            embedding_endpoint_type="openai",
                            embedding_endpoint=s.embedder_base,
                            embedding_model=s.embedder_model,
                            embedding_dim=s.embedding_dims,
                        ),
                    )
                )
                self._agents[tenant] = agent.id
        return self._agents[tenant]

    async def _call(self, work: Any) -> Any:
        """A Letta call. The server unreachable, or its 5xx (how it reports the model service
        failing under it), is infrastructure: the case is retried. A 4xx is Letta refusing
        memeval's request: the engine's own failure, scored."""
        from letta_client.core.api_error import ApiError

        try:
            return await work
        except httpx.TransportError as exc:
            raise EngineUnavailable(f"letta: the server is unreachable: {exc}") from exc
        except ApiError as exc:
            if exc.status_code is not None and exc.status_code >= 500:
                detail = str(exc.body)[:300]
                raise EngineUnavailable(f"letta: server error {exc.status_code}: {detail}") from exc
            raise

    # ---- writes ---------------------------------------------------------------------------

    async def _write(self, tenant: str, text: str, at: datetime | None) -> str:
        write = idempotency.current() or uuid.uuid4().hex
        agent = await self._agent(tenant)
        client = await self._open()
        extra = {"created_at": at} if at is not None else {}
        done = await self._call(client.agents.passages.create(agent, text=text, **extra))
        self._ledger.record(tenant, write, (p.id for p in done if p.id))
        return write

    async def _search(self, tenant: str, text: str, k: int) -> list[str]:
        agent = await self._agent(tenant, create=False)
        if agent is None or not text.strip():
            return []
        client = await self._open()
        found = await self._call(client.agents.passages.search(agent, query=text, top_k=k))
        return [r.content for r in found.results if r.content]

    # ---- fixture face ---------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        await self._write(tenant, assertion.text, assertion.recorded_at or assertion.valid_from)

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        hits = [Hit(text=t) for t in await self._search(tenant, text, k)]
        return QueryResult(hits=hits, abstained=not hits)

    async def reset(self, tenant: str) -> None:
        agent = await self._agent(tenant, create=False)
        if agent is not None:
            client = await self._open()
            await self._call(client.agents.delete(agent))
            self._agents.pop(tenant, None)
        self._ledger.drop(tenant)

    # ---- lifecycle face -------------------------------------------------------------------

    async def recall(self, tenant: str, text: str) -> list[str]:
        return await self._search(tenant, text, PACK_K)

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        text = f"{item.title}: {item.text}" if item.title else item.text
        return await self._write(tenant, text, item.at)

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        return await self._write(tenant, said(turn), turn.at)

    async def list(self, tenant: str) -> list[str]:
        agent = await self._agent(tenant, create=False)
        if agent is None:
            return []
        client = await self._open()
        ids: list[str] = []
        after: str | None = None
        while True:
            page = await self._call(
                client.agents.passages.list(agent, limit=LIST_PAGE, after=after)
            )
            ids += [p.id for p in page if p.id]
            if len(page) < LIST_PAGE:
                return self._ledger.visible(tenant, ids)
            after = ids[-1]
