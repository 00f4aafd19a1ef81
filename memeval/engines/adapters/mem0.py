"""`mem0`: the Mem0 hosted platform, on the routes its official client `mem0ai` speaks.

The wire, as `mem0ai` 2.2.1 (`mem0/client/main.py`) and mem0's OpenAPI document give it:
`Authorization: Token <MEM0_API_KEY>`; `GET /v1/ping/` to prove the key; writes are
`POST /v3/memories/add/` with the user id at the top level, and are queued: the reply carries
an `event_id` that `GET /v1/event/{id}/` reports PENDING until SUCCEEDED (or FAILED), and a
write is searchable only once its event has succeeded. Reads are `POST /v3/memories/search/`
with the user id inside `filters` (top-level ids are refused with 400); forgetting is
`DELETE /v1/memories/?user_id=`, itself queued.

A memeval tenant is a mem0 `user_id`. A fixture's `store` waits for its event, because the
fixture face queries right after writing; the lifecycle face does not wait, and `list` reports
a write once its event has succeeded, so the runner's settle step follows mem0's own rule for
visibility. With `infer=false` (the default) a message is stored as given; the OpenAPI says
such a write is answered at once with its memories, mem0's plugin docs say it is queued like
any other, and both replies are read. With `infer=true` mem0's model extracts memories, a write
may yield none or several, and settling still works, since it counts writes, not memories.

mem0 documents no idempotency key for adds (only its profile jobs take one), so a write retried
after a timeout may be stored twice. Each write therefore carries its key
(`memeval.engines.idempotency.current()`, or a fresh one) in its metadata as `memeval_write`;
hits and `list` count distinct writes, never memories. mem0 documents no 402 either; the SDK
maps 413 to a quota error but words it "request too large", so a 413 is scored as that call's
failure while a 402 stops the run as credits exhausted.

memeval keeps its own httpx transport rather than `mem0ai.AsyncMemoryClient`: the SDK's async
client pings with the blocking `requests` library inside its constructor (it would stall the
worker's event loop), retries nothing and ignores Retry-After, and the package brings in openai,
qdrant-client, grpcio and telemetry to a hosted service. The SDK is what the contract tests
(`tests/adapters/test_mem0_contract.py`) drive against the same fake this adapter is tested on.
The open-source library (`mem0.Memory`) is the separate `mem0-oss` engine.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import defaultdict
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import SettingsConfigDict

from memeval.engines import idempotency
from memeval.engines.adapters.packs import pack_of
from memeval.engines.adapters.remote import RemoteEngine, parse
from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.adapters.transport import RemoteError
from memeval.engines.pack import PACK_K
from memeval.engines.types import (
    Assertion,
    Capability,
    Hit,
    MemoryItem,
    Pack,
    QueryResult,
    Turn,
    TurnContext,
)

log = logging.getLogger(__name__)

PING = "/v1/ping/"
ADD = "/v3/memories/add/"
SEARCH = "/v3/memories/search/"
FORGET = "/v1/memories/"
EVENT = "/v1/event/{}/"
ID_TAG = "memeval_id"
WRITE_TAG = "memeval_write"
SDK = "mem0ai 2.2.1"


class Mem0Settings(EngineSettings):
    model_config = SettingsConfigDict(env_prefix="MEM0_")
    engine = "mem0"
    url: str = Field(default="https://api.mem0.ai", description="The Mem0 platform API.")
    api_key: SecretStr = Field(description="Mem0 platform API key.")
    infer: bool = Field(default=False, description="Let mem0's model extract memories.")
    poll: float = Field(default=0.5, gt=0, description="Seconds between polls of a queued add.")
    event_wait: float = Field(
        default=60.0, gt=0, description="Seconds a fixture write may stay queued before failing."
    )


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Added(_Reply):
    status: str | None = None
    event_id: str | None = None
    results: list[dict[str, Any]] | None = None
    message: str | None = None


class _Event(_Reply):
    status: str
    error: str | None = None


class _Memory(_Reply):
    id: str
    memory: str = ""
    score: float | None = None
    metadata: dict[str, Any] | None = None


class _Found(_Reply):
    results: list[_Memory] = Field(default_factory=list)


class Mem0Engine(RemoteEngine):
    name = "mem0"
    settings_model = Mem0Settings
    scheme = "Token"
    verified_against = f"{SDK} (MemoryClient, AsyncMemoryClient) and mem0's OpenAPI document"
    capabilities = frozenset(
        {Capability.store, Capability.abstain, Capability.provenance, Capability.lifecycle}
    )
    notes = (
        "search drops results under mem0's relevance threshold, which is how it abstains",
        "no usage: mem0 reports request counts, not spend",
    )

    def __init__(self, settings: Mem0Settings) -> None:
        super().__init__(settings)
        self.infer = settings.infer
        self.poll = settings.poll
        self.event_wait = settings.event_wait
        # tenant -> write key -> the event still to succeed, or None once it has
        self._writes: dict[str, dict[str, str | None]] = defaultdict(dict)

    async def preflight(self) -> None:
        """The ping mem0's own clients make on construction; a refused key is `AuthRejected`."""
        await self.fetch("GET", PING)

    # ---- writes ---------------------------------------------------------------------------

    async def _add(
        self, tenant: str, role: str, text: str, metadata: dict[str, Any], at: datetime | None
    ) -> str:
        write = idempotency.current() or uuid.uuid4().hex
        body: dict[str, Any] = {
            "messages": [{"role": role, "content": text}],
            "user_id": tenant,
            "metadata": {**metadata, WRITE_TAG: write},
            "infer": self.infer,
        }
        if at is not None:
            body["timestamp"] = int(at.timestamp())  # mem0 backdates created_at to it
        added = parse(_Added, await self.request("POST", ADD, json=body), self.name)
        if added.results is not None and not added.event_id:
            self._writes[tenant][write] = None
        elif added.event_id:
            self._writes[tenant][write] = added.event_id
        else:
            raise RemoteError(f"mem0 answered an add with neither results nor event_id: {added}")
        return write

    async def _finished(self, event_id: str) -> bool | None:
        """True once the event succeeded, False if it failed, None while it is queued."""
        event = parse(_Event, await self.request("GET", EVENT.format(event_id)), self.name)
        if event.status == "SUCCEEDED":
            return True
        if event.status == "FAILED":
            log.warning("mem0: write event %s failed: %s", event_id, event.error or "no reason")
            return False
        return None

    async def _wait(self, tenant: str, write: str) -> None:
        event_id = self._writes[tenant].get(write)
        if event_id is None:
            return
        deadline = asyncio.get_running_loop().time() + self.event_wait
        while (done := await self._finished(event_id)) is None:
            if asyncio.get_running_loop().time() > deadline:
                raise RemoteError(
                    f"mem0: write event {event_id} still queued after {self.event_wait:g}s"
                )
            await asyncio.sleep(self.poll)
        if not done:
            raise RemoteError(f"mem0: write event {event_id} failed")
        self._writes[tenant][write] = None

    # ---- reads ----------------------------------------------------------------------------

    async def _search(self, tenant: str, text: str, k: int) -> list[_Memory]:
        body = {"query": text, "filters": {"user_id": tenant}, "top_k": k}
        found = parse(_Found, await self.request("POST", SEARCH, json=body), self.name).results
        seen: set[str] = set()
        distinct = []
        for memory in found:  # a write stored twice by a retry shows once
            write = (memory.metadata or {}).get(WRITE_TAG, memory.id)
            if write not in seen:
                seen.add(write)
                distinct.append(memory)
        return distinct

    # ---- fixture face ---------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        metadata = {ID_TAG: assertion.id, "source": assertion.source}
        write = await self._add(tenant, "user", assertion.text, metadata, None)
        await self._wait(tenant, write)

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        hits = []
        for found in await self._search(tenant, text, k):
            metadata = found.metadata or {}
            source = metadata.get("source")
            hits.append(
                Hit(
                    text=found.memory,
                    source=source,
                    assertion_id=metadata.get(ID_TAG),
                    sources=[source] if source else [],
                    score=found.score,
                )
            )
        return QueryResult(hits=hits)

    async def reset(self, tenant: str) -> None:
        await self.request("DELETE", FORGET, params={"user_id": tenant})
        self._writes.pop(tenant, None)

    # ---- lifecycle face: packs from search ------------------------------------------------

    async def _pack(self, tenant: str, title: str, text: str) -> Pack:
        found = await self._search(tenant, text, PACK_K) if text.strip() else []
        return pack_of(title, [m.memory for m in found])

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        text = f"{item.title}: {item.text}" if item.title else item.text
        return await self._add(tenant, "user", text, {ID_TAG: item.id, "kind": item.kind}, item.at)

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        pack = await self._pack(tenant, "Context for the reply", ctx.turn.text)
        await self.post_turn(tenant, ctx.agent, ctx.thread, ctx.turn)
        return pack

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        metadata = {"agent": agent, "thread": thread}
        return await self._add(tenant, turn.role, turn.text, metadata, turn.at)

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        return await self._pack(tenant, "Session start", focus or thread or "")

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        query = " ".join(t.text for t in dropped)
        return await self._pack(tenant, "Carried over from the compacted turns", query)

    async def list(self, tenant: str) -> list[str]:
        """Writes whose event has succeeded: mem0's own word that they are searchable. A write
        whose event failed is logged and never listed, so the settle step reports the gap."""
        writes = self._writes[tenant]
        for write, event_id in list(writes.items()):
            if event_id is None:
                continue
            done = await self._finished(event_id)
            if done:
                writes[write] = None
            elif done is False:
                del writes[write]
        return [write for write, event_id in writes.items() if event_id is None]

    async def forget(self, tenant: str) -> None:
        await self.reset(tenant)
