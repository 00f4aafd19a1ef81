"""`langmem`: LangChain's LangMem library over LangGraph's in-memory store, in the worker.

LangMem's memory store manager writes (its model reads each new message beside the tenant's
closest memories and inserts or updates memories, through tool calls), and its search-memory
tool reads (LangGraph's store ranks the tenant's memories by cosine similarity of the served
embeddings). The chat model and the embedder are LangChain's OpenAI clients on whatever
OpenAI-compatible service `url` names, `memeval models serve` by default. LangSmith tracing is
switched off before LangChain is imported; the embedder is told not to count tokens with
tiktoken, which would fetch its encoding from the network on first use.

A tenant is a LangGraph namespace (`memeval`, tenant); reset and forget delete every item in
it. The store is the in-process `InMemoryStore`: a write is searchable when the manager
returns, and the store lives as long as the engine. A pack is one search of `PACK_K` memories,
best first, cut to memeval's token budget; LangMem's search has no score floor, so it never
abstains while the tenant holds anything.
"""

from __future__ import annotations

import os
import uuid
from importlib import metadata
from typing import TYPE_CHECKING, Any

import httpx
from pydantic_settings import SettingsConfigDict

from memeval.engines import idempotency
from memeval.engines.adapters.library import Ledger, model_service_down
from memeval.engines.pack import PACK_K
from memeval.engines.types import Assertion, Capability, Hit, MemoryItem, QueryResult, Turn
from memeval.models import NOTE
from memeval.models.local import ModelSettings, SearchPacks, check_models, library_missing, said

if TYPE_CHECKING:
    from langgraph.store.memory import InMemoryStore

LIST_MAX = 10_000
ROOT = "memeval"
NAMESPACE = (ROOT, "{langgraph_user_id}")


class LangMemSettings(ModelSettings):
    model_config = SettingsConfigDict(env_prefix="LANGMEM_")
    engine = "langmem"


def _version() -> str:
    try:
        return metadata.version("langmem")
    except metadata.PackageNotFoundError:
        return "not installed"


def _import() -> None:
    # Read by LangSmith when a run starts: off before anything of LangChain's is imported.
    os.environ["LANGSMITH_TRACING"] = "false"
    os.environ["LANGCHAIN_TRACING_V2"] = "false"
    try:
        import langgraph.store.memory  # noqa: F401
        import langmem  # noqa: F401
    except ImportError:
        raise library_missing("langmem", "langmem", "langmem") from None


def label(tenant: str) -> str:
    """LangGraph refuses a namespace label holding a period; escaped, tenants stay distinct."""
    return tenant.replace("%", "%25").replace(".", "%2E") or "%00"


class LangMemEngine(SearchPacks):
    name = "langmem"
    settings_model = LangMemSettings
    verified_against = f"langmem {_version()} library on LangGraph's InMemoryStore, in-process"
    capabilities = frozenset({Capability.store, Capability.lifecycle})
    notes = (
        "in-process LangMem: its memory manager writes, its search tool reads; models on any "
        "OpenAI-compatible URL",
        "no abstention (similarity search has no floor), no provenance, no point-in-time queries",
        f"on the default url, {NOTE}",
    )

    def __init__(self, settings: LangMemSettings) -> None:
        self.settings = settings
        self._parts: tuple[InMemoryStore, Any, Any] | None = None
        self._http: httpx.AsyncClient | None = None
        self._ledger = Ledger()

    async def preflight(self) -> None:
        _import()
        await check_models(self.name, self.settings)

    async def close(self) -> None:
        self._parts = None
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()

    def _open(self) -> tuple[InMemoryStore, Any, Any]:
        if self._parts is None:
            _import()
            from langchain_openai import ChatOpenAI, OpenAIEmbeddings
            from langgraph.store.memory import InMemoryStore
            from langmem import create_memory_store_manager, create_search_memory_tool

            s = self.settings
            # The engine's own client: LangChain's default async client is shared by every
            # instance in the process, bound to the event loop that first used it.
            self._http = httpx.AsyncClient(timeout=s.timeout)
            embedder = OpenAIEmbeddings(
                model=s.embedder_model,
                base_url=s.embedder_base,
                api_key=s.key,  # type: ignore[arg-type]
                dimensions=None,
                check_embedding_ctx_length=False,
                http_async_client=self._http,
            )
            store = InMemoryStore(index={"dims": s.embedding_dims, "embed": embedder})
            llm = ChatOpenAI(
                model=s.llm_model,
                base_url=s.url,
                api_key=s.key,  # type: ignore[arg-type]
                timeout=s.timeout,
                http_async_client=self._http,
            )
            manager = create_memory_store_manager(llm, namespace=NAMESPACE, store=store)
            search = create_search_memory_tool(
                NAMESPACE, store=store, response_format="content_and_artifact"
            )
            self._parts = (store, manager, search)
        return self._parts

    @staticmethod
    def _config(tenant: str) -> dict[str, Any]:
        return {"configurable": {"langgraph_user_id": label(tenant)}}

    async def _guard(self, work: Any) -> Any:
        try:
            return await work
        except Exception as exc:
            down = model_service_down(self.name, exc)
            if down is not None:
                raise down from exc
            raise

    # ---- writes ---------------------------------------------------------------------------

    async def _write(self, tenant: str, role: str, text: str) -> str:
        write = idempotency.current() or uuid.uuid4().hex
        _, manager, _ = self._open()
        message = {"role": "assistant" if role == "assistant" else "user", "content": text}
        done = await self._guard(manager.ainvoke({"messages": [message]}, self._config(tenant)))
        self._ledger.record(tenant, write, (str(m["key"]) for m in done))
        return write

    async def _search(self, tenant: str, text: str, k: int) -> list[str]:
        if not text.strip():
            return []
        _, _, search = self._open()
        call = {"type": "tool_call", "id": uuid.uuid4().hex, "name": search.name}
        call["args"] = {"query": text, "limit": k}
        reply = await self._guard(search.ainvoke(call, self._config(tenant)))
        return [t for t in (_text(item.value) for item in reply.artifact or []) if t]

    async def _items(self, tenant: str) -> list[Any]:
        store, _, _ = self._open()
        found: list[Any] = await store.asearch((ROOT, label(tenant)), limit=LIST_MAX)
        return found

    # ---- fixture face ---------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        await self._write(tenant, "user", assertion.text)

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        hits = [Hit(text=t) for t in await self._search(tenant, text, k)]
        return QueryResult(hits=hits, abstained=not hits)

    async def reset(self, tenant: str) -> None:
        store, _, _ = self._open()
        for item in await self._items(tenant):
            await store.adelete(tuple(item.namespace), item.key)
        self._ledger.drop(tenant)

    # ---- lifecycle face -------------------------------------------------------------------

    async def recall(self, tenant: str, text: str) -> list[str]:
        return await self._search(tenant, text, PACK_K)

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        return await self._write(
            tenant, "user", f"{item.title}: {item.text}" if item.title else item.text
        )

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        return await self._write(tenant, turn.role, said(turn))

    async def list(self, tenant: str) -> list[str]:
        return self._ledger.visible(tenant, (str(i.key) for i in await self._items(tenant)))


def _text(value: dict[str, Any]) -> str:
    """A LangMem memory's text: its `Memory` schema holds one `content` string."""
    content = value.get("content")
    if isinstance(content, dict):
        content = content.get("content")
    return content if isinstance(content, str) else ""
