"""`supermemory`: Supermemory's hosted API (v5), on the routes its official SDK speaks.

The wire, as `supermemory` 5.0.1 (`supermemory/raw_client.py`, `documents/`, `namespaces/`,
`types/`) and the v5 API reference give it: `Authorization: Bearer <SUPERMEMORY_API_KEY>`; every
content route is scoped by a namespace in the path (v3 and v4 called it the container tag); a
document is added with `POST /ns/{ns}/document` under an optional caller `id`, and the same id
with the same content again is an unchanged duplicate, not a second document. Processing is
queued: `system.status` goes `queued` ... `done` (or `failed`), read from
`GET /ns/{ns}/document/{id}` or the paged `POST /ns/{ns}/list/documents`. Reads are
`POST /ns/{ns}/search` (memories, source chunks, or both: `searchMode`); forgetting is
`DELETE /ns/{ns}`, which removes the namespace's documents and memories.

A memeval tenant is one namespace (escaped to `[A-Za-z0-9_-]`). Every stored item is one
document whose id is derived from its write key (`hosted_writes`), so a write retried after a
timeout lands on the same document and is deduplicated by Supermemory itself; a history stores
one document per turn, each under its own id. Documents carry their write key in their metadata
(which the service copies onto the memories and chunks derived from them), so a pack shows each
write once even when search answers it both as a memory and as a chunk. `list` reports the
documents Supermemory says are `done`, so the runner's settle step follows the service's own
word; a fixture's `store` waits for its document, since the fixture face queries at once.

Supermemory names no idempotency header; its 402 is the SDK's `PaymentRequiredError`, which the
transport turns into a stopped run. memeval keeps its own httpx transport rather than the SDK's
client (which retries 409 and has no back-pressure hook); `tests/adapters/test_supermemory.py`
drives the SDK against the same fake this adapter is tested on.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import SettingsConfigDict

from memeval.engines.adapters import hosted_writes as hw
from memeval.engines.adapters.cortex_scope import tenant_id
from memeval.engines.adapters.packs import SearchPacks
from memeval.engines.adapters.remote import RemoteEngine, parse
from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.adapters.transport import RemoteError
from memeval.engines.pack import PACK_K
from memeval.engines.types import (
    Assertion,
    Capability,
    Hit,
    MemoryItem,
    QueryResult,
    Turn,
)

SDK = "supermemory 5.0.1"
ID_TAG = "memeval_id"
WRITE_TAG = "memeval_write"
PAGE = 100


class SupermemorySettings(EngineSettings):
    model_config = SettingsConfigDict(env_prefix="SUPERMEMORY_")
    engine = "supermemory"
    url: str = Field(default="https://api.supermemory.ai", description="Supermemory's API.")
    api_key: SecretStr = Field(description="Supermemory API key (billed: use a test account).")
    search_mode: Literal["hybrid", "memories", "chunks"] = Field(
        default="hybrid", description="What search recalls: memories, source chunks, or both."
    )
    threshold: float | None = Field(
        default=None, ge=0, le=1, description="Minimum relevance; unset: Supermemory's default."
    )
    dreaming: Literal["dynamic", "instant"] = Field(
        default="dynamic", description="`instant` processes each document at once (billed more)."
    )
    poll: float = Field(default=0.5, gt=0, description="Seconds between polls of a document.")
    settle_wait: float = Field(
        default=120.0, gt=0, description="Seconds a fixture write may stay queued before failing."
    )


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class _System(_Reply):
    status: str


class _DocumentRef(_Reply):
    id: str
    status: str


class _Document(_Reply):
    id: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    system: _System


class _Pagination(_Reply):
    current_page: float = Field(alias="currentPage")
    total_pages: float = Field(alias="totalPages")


class _Listing(_Reply):
    documents: list[_Document]
    pagination: _Pagination


class _Result(_Reply):
    id: str
    memory: str | None = None
    chunk: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    similarity: float

    @property
    def text(self) -> str:
        return self.memory or self.chunk or ""

    @property
    def write(self) -> str:
        return str(self.metadata.get(WRITE_TAG, self.id))


class _Found(_Reply):
    results: list[_Result]


class SupermemoryEngine(SearchPacks, RemoteEngine):
    name = "supermemory"
    settings_model = SupermemorySettings
    verified_against = f"{SDK} (Supermemory, AsyncSupermemory) and the v5 API reference"
    capabilities = frozenset(
        {Capability.store, Capability.abstain, Capability.provenance, Capability.lifecycle}
    )
    notes = (
        "search drops results under its relevance threshold, which is how it abstains",
        "no usage: Supermemory reports operations on its dashboard, not per request",
    )

    def __init__(self, settings: SupermemorySettings) -> None:
        super().__init__(settings)
        self.options = settings

    async def preflight(self) -> None:
        """The organization read: proves the route, the key and the account in one request."""
        await self.fetch("GET", "/organization")

    @staticmethod
    def space(tenant: str) -> str:
        return f"/ns/{tenant_id(tenant)}"

    # ---- writes ---------------------------------------------------------------------------

    async def _add(self, tenant: str, write: str, text: str, metadata: dict[str, Any]) -> str:
        """One document for one write; `date` is when the content is from."""
        body: dict[str, Any] = {
            "content": text,
            "id": hw.digest(write, "mw"),
            "metadata": {k: v for k, v in {**metadata, WRITE_TAG: write}.items() if v is not None},
            "dreaming": self.options.dreaming,
        }
        if isinstance(metadata.get("at"), str):
            body["date"] = metadata["at"]
        parse(
            _DocumentRef,
            await self.request("POST", f"{self.space(tenant)}/document", json=body),
            self.name,
        )
        return write

    async def _state(self, tenant: str, write: str) -> bool | None:
        path = f"{self.space(tenant)}/document/{hw.digest(write, 'mw')}"
        status = parse(_Document, await self.request("GET", path), self.name).system.status
        return True if status == "done" else False if status == "failed" else None

    # ---- reads ----------------------------------------------------------------------------

    async def _search(self, tenant: str, text: str, k: int) -> list[_Result]:
        body: dict[str, Any] = {"query": text, "searchMode": self.options.search_mode, "limit": k}
        if self.options.threshold is not None:
            body["threshold"] = self.options.threshold
        found = await self.request("POST", f"{self.space(tenant)}/search", json=body)
        return hw.distinct(parse(_Found, found, self.name).results, lambda r: r.write)

    # ---- fixture face ---------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        write = hw.write_id()
        await self._add(
            tenant, write, assertion.text, {ID_TAG: assertion.id, "source": assertion.source}
        )
        await hw.until_done(
            lambda: self._state(tenant, write),
            f"supermemory: document for {assertion.id}",
            self.options.settle_wait,
            self.options.poll,
        )

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        hits = []
        for found in await self._search(tenant, text, k):
            source = found.metadata.get("source")
            hits.append(
                Hit(
                    text=found.text,
                    source=source,
                    assertion_id=found.metadata.get(ID_TAG),
                    sources=[source] if source else [],
                    score=found.similarity,
                )
            )
        return QueryResult(hits=hits)

    async def reset(self, tenant: str) -> None:
        try:
            await self.request("DELETE", self.space(tenant))
        except RemoteError as exc:
            if exc.status != 404:  # a namespace never written to has nothing to delete
                raise

    async def recall(self, tenant: str, text: str) -> list[str]:
        return [r.text for r in await self._search(tenant, text, PACK_K)]

    # ---- lifecycle face -------------------------------------------------------------------

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        text = f"{item.title}: {item.text}" if item.title else item.text
        at = item.at.isoformat() if item.at else None
        return await self._add(
            tenant, hw.write_id(), text, {ID_TAG: item.id, "kind": item.kind, "at": at}
        )

    async def _turn(self, tenant: str, write: str, agent: str, thread: str, turn: Turn) -> str:
        who = turn.speaker or turn.role
        metadata = {"agent": agent, "thread": thread, "role": turn.role, ID_TAG: turn.id}
        return await self._add(
            tenant, write, f"{who}: {turn.text}", {**metadata, "at": turn.at.isoformat()}
        )

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        return await self._turn(tenant, hw.write_id(), agent, thread, turn)

    async def write_history(
        self, tenant: str, agent: str, thread: str, turns: list[Turn]
    ) -> list[str]:
        """One document per turn, each under its own id (`hosted_writes.item_ids`)."""
        return [
            await self._turn(tenant, write, agent, thread, turn)
            for write, turn in zip(hw.item_ids(len(turns)), turns, strict=True)
        ]

    async def list(self, tenant: str) -> list[str]:
        """Writes whose document Supermemory reports `done`; a failed one is never listed, so
        the settle step reports the gap."""
        done: list[str] = []
        page = 1
        while True:
            data = await self.request(
                "POST",
                f"{self.space(tenant)}/list/documents",
                params={"page": page, "limit": PAGE},
                json={},
            )
            listing = parse(_Listing, data, self.name)
            done += [
                str(d.metadata.get(WRITE_TAG, d.id))
                for d in listing.documents
                if d.system.status == "done"
            ]
            if listing.pagination.current_page >= listing.pagination.total_pages:
                return done
            page += 1

    async def forget(self, tenant: str) -> None:
        await self.reset(tenant)
