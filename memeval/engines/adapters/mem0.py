"""`mem0`: the Mem0 platform API, with `Authorization: Token <MEM0_API_KEY>`.

A memeval tenant is a mem0 `user_id`. Writes are `POST /v1/memories/` (synchronous, so a
write is searchable when it returns), reads `POST /v1/memories/search/` and `GET
/v1/memories/?user_id=`, and forgetting is `DELETE /v1/memories/?user_id=`. These are the
v1 routes of mem0's public API reference; its newest SDKs also speak v3 routes that move the
user id into a `filters` body, which a later change can adopt here alone. Lists come back
either bare or as `{"results": [...]}`, and both are read.

By default writes are stored as given (`infer=false`), so each write is one memory: the
fixture face maps hits back to assertion ids through metadata, and the lifecycle face can
settle by counting. With `infer=true` mem0's own model extracts memories, a write may yield
none or several, and the lifecycle face is reported unsupported rather than left to time out.

mem0's open-source mode (`pip install mem0ai`, `mem0.Memory`) is not offered: it needs an
embedding model and, to infer, an LLM, which it fetches from a hub or a provider at run time,
so it cannot run offline here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import SettingsConfigDict

from memeval.engines.adapters.packs import pack_of
from memeval.engines.adapters.remote import RemoteEngine, parse
from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.base import Unsupported
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

PATH = "/v1/memories/"
SEARCH = "/v1/memories/search/"
ID_TAG = "memeval_id"
PACK_K = 12


class Mem0Settings(EngineSettings):
    model_config = SettingsConfigDict(env_prefix="MEM0_")
    engine = "mem0"
    url: str = Field(default="https://api.mem0.ai", description="The Mem0 platform API.")
    api_key: SecretStr = Field(description="Mem0 platform API key.")
    infer: bool = Field(default=False, description="Let mem0's model extract memories.")


class _Memory(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str
    memory: str = ""
    score: float | None = None
    metadata: dict[str, Any] | None = None


class _Memories(BaseModel):
    results: list[_Memory] = Field(default_factory=list)


def _memories(data: Any, engine: str) -> list[_Memory]:
    return parse(_Memories, {"results": data} if isinstance(data, list) else data, engine).results


class Mem0Engine(RemoteEngine):
    name = "mem0"
    settings_model = Mem0Settings
    scheme = "Token"
    capabilities = frozenset({Capability.store, Capability.provenance, Capability.lifecycle})
    notes = ("with infer=true a write may yield several memories: lifecycle is unsupported",)

    def __init__(self, settings: Mem0Settings) -> None:
        super().__init__(settings)
        self.infer = settings.infer
        if self.infer:
            self.capabilities = self.capabilities - {Capability.lifecycle}

    async def _add(self, tenant: str, role: str, text: str, metadata: dict[str, Any]) -> str:
        body = {
            "messages": [{"role": role, "content": text}],
            "user_id": tenant,
            "metadata": metadata,
            "infer": self.infer,
            "async_mode": False,
            "output_format": "v1.1",
        }
        added = _memories(await self.request("POST", PATH, json=body), self.name)
        return added[0].id if added else ""

    async def _search(self, tenant: str, text: str, k: int) -> list[_Memory]:
        body = {"query": text, "user_id": tenant, "top_k": k, "output_format": "v1.1"}
        return _memories(await self.request("POST", SEARCH, json=body), self.name)

    def _lifecycle(self) -> None:
        if self.infer:
            raise Unsupported(Capability.lifecycle)

    # ---- fixture face -------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        metadata = {ID_TAG: assertion.id, "source": assertion.source}
        await self._add(tenant, "user", assertion.text, metadata)

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
        await self.request("DELETE", PATH, params={"user_id": tenant})

    # ---- lifecycle face: writes stored as given, packs from search ----------------------

    async def _pack(self, tenant: str, title: str, text: str) -> Pack:
        found = await self._search(tenant, text, PACK_K) if text.strip() else []
        return pack_of(title, [m.memory for m in found])

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        self._lifecycle()
        text = f"{item.title}: {item.text}" if item.title else item.text
        return await self._add(tenant, "user", text, {ID_TAG: item.id, "kind": item.kind})

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        self._lifecycle()
        pack = await self._pack(tenant, "Context for the reply", ctx.turn.text)
        await self.post_turn(tenant, ctx.agent, ctx.thread, ctx.turn)
        return pack

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        self._lifecycle()
        metadata = {"agent": agent, "thread": thread, "at": turn.at.isoformat()}
        return await self._add(tenant, turn.role, turn.text, metadata)

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
    ) -> Pack:
        self._lifecycle()
        return await self._pack(tenant, "Session start", focus or thread or "")

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        self._lifecycle()
        query = " ".join(t.text for t in dropped)
        return await self._pack(tenant, "Carried over from the compacted turns", query)

    async def list(self, tenant: str) -> list[str]:
        self._lifecycle()
        found = await self.request("GET", PATH, params={"user_id": tenant})
        return [m.id for m in _memories(found, self.name)]

    async def forget(self, tenant: str) -> None:
        await self.reset(tenant)
