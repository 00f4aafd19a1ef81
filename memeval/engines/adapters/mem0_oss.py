"""`mem0-oss`: mem0's open-source library (`mem0ai`'s `AsyncMemory`), in the worker process.

Nothing here is hosted: the vector store is embedded (qdrant on disk, or faiss) in a folder of
this engine's own, and mem0's LLM and embedder are whatever OpenAI-compatible service `url`
names: `memeval models serve` by default, vLLM, Ollama or OpenRouter for real figures. No
model is fetched at run time (spaCy and fastembed are optional in mem0ai and, absent, mem0
falls back to plain text and vector search), and mem0's telemetry is switched off before the
library is first imported (`MEM0_TELEMETRY=False`): it would otherwise send usage events and
fetch a notice file from GitHub.

A tenant is mem0's `user_id`; turns also carry the agent as `agent_id` and the thread as
`run_id`, which mem0 records without narrowing a search by user. Reset and forget are
`delete_all(user_id=...)`; `list` is `get_all` for the user. mem0's `add` has finished when it
returns, so a write is visible at once. With `infer` on (the default) mem0's model extracts
memories and a write may yield none or several: every memory carries its write's key in its
metadata (`memeval_write`), `list` counts distinct writes, and a write that mem0 judged to hold
nothing worth keeping is listed as the settled write it is.

One embedded qdrant client is not safe under concurrent threads, and mem0 runs each store call
in a thread of its own, so this engine's calls take turns (an asyncio lock): a worker process
with several concurrent cases measures mem0 one call at a time, as an application holding one
`Memory` would.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import uuid
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from memeval.engines import idempotency
from memeval.engines.pack import PACK_K
from memeval.engines.types import (
    Assertion,
    Capability,
    Hit,
    MemoryItem,
    QueryResult,
    Turn,
)
from memeval.errors import EngineUnavailable, UsageError
from memeval.models import NOTE
from memeval.models.local import (
    ModelSettings,
    SearchPacks,
    check_models,
    library_missing,
    store_folder,
)

if TYPE_CHECKING:
    from mem0 import AsyncMemory

ID_TAG = "memeval_id"
WRITE_TAG = "memeval_write"
LIST_MAX = 10_000
COLLECTION = "memeval"


class Mem0OssSettings(ModelSettings):
    model_config = SettingsConfigDict(env_prefix="MEM0_OSS_")
    engine = "mem0-oss"
    vector_store: Literal["qdrant", "faiss"] = Field(
        default="qdrant", description="Embedded vector store mem0 keeps its memories in."
    )
    infer: bool = Field(default=True, description="Let mem0's model extract memories.")
    threshold: float = Field(
        default=0.1, ge=0, le=1, description="mem0's search threshold: fewer hits below it."
    )


def _mem0_version() -> str:
    try:
        return metadata.version("mem0ai")
    except metadata.PackageNotFoundError:
        return "not installed"


def _import_mem0() -> tuple[type[AsyncMemory], type[Any]]:
    # Read by mem0 once, at import: set first, or the first `add` reports to PostHog.
    os.environ["MEM0_TELEMETRY"] = "False"
    try:
        from mem0 import AsyncMemory
        from mem0.configs.base import MemoryConfig
        from mem0.memory import main, telemetry
    except ImportError:
        raise library_missing("mem0-oss", "mem0ai", "mem0") from None
    # Imported earlier in this process with telemetry on (the hosted client's tests do):
    # both copies of the flag must be off.
    telemetry.MEM0_TELEMETRY = False
    main.MEM0_TELEMETRY = False
    return AsyncMemory, MemoryConfig


def _vector_store_installed(kind: str) -> None:
    """qdrant's client comes with mem0ai; faiss is the user's to install."""
    if kind == "faiss" and importlib.util.find_spec("faiss") is None:
        raise UsageError(
            "engine `mem0-oss` is set to the faiss vector store, which is not installed",
            fix="pip install faiss-cpu, or set MEM0_OSS_VECTOR_STORE=qdrant",
        )


class Mem0OssEngine(SearchPacks):
    name = "mem0-oss"
    settings_model = Mem0OssSettings
    verified_against = f"mem0ai {_mem0_version()} library (AsyncMemory), in-process"
    capabilities = frozenset(
        {Capability.store, Capability.abstain, Capability.provenance, Capability.lifecycle}
    )
    notes = (
        "in-process mem0 library: embedded qdrant or faiss, models on any OpenAI-compatible URL",
        "abstains when mem0's search threshold leaves no hit; no point-in-time queries "
        "(mem0's open-source search refuses a reference date)",
        f"on the default url, {NOTE}",
    )

    def __init__(self, settings: Mem0OssSettings) -> None:
        self.settings = settings
        self.folder: Path | None = None
        self._memory: AsyncMemory | None = None
        self._turn = asyncio.Lock()
        # tenant -> write keys mem0 stored nothing for (it judged them empty)
        self._empty: dict[str, set[str]] = {}

    async def preflight(self) -> None:
        _import_mem0()
        _vector_store_installed(self.settings.vector_store)
        await check_models(self.name, self.settings)

    async def close(self) -> None:
        self._memory = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def _config(self, folder: Path, config_type: type[Any]) -> Any:
        s = self.settings
        store: dict[str, Any] = {
            "collection_name": COLLECTION,
            "path": str(folder / s.vector_store),
            "embedding_model_dims": s.embedding_dims,
        }
        if s.vector_store == "qdrant":
            store["on_disk"] = True
        llm = {
            "model": s.llm_model,
            "api_key": s.key,
            "openai_base_url": s.url,
            # mem0 sends its LLM to OpenRouter whenever OPENROUTER_API_KEY is set (memeval's
            # own `--llm` key): this keeps it on the URL the user gave.
            "openrouter_base_url": s.url,
        }
        embedder = {
            "model": s.embedder_model,
            "api_key": s.key,
            "openai_base_url": s.embedder_base,
            "embedding_dims": s.embedding_dims,
        }
        return config_type(
            vector_store={"provider": s.vector_store, "config": store},
            llm={"provider": "openai", "config": llm},
            embedder={"provider": "openai", "config": embedder},
            history_db_path=str(folder / "history.db"),
        )

    async def _mem0(self) -> AsyncMemory:
        if self._memory is None:
            memory_type, config_type = _import_mem0()
            _vector_store_installed(self.settings.vector_store)
            self.folder = store_folder(self.name, self.settings.store_dir)
            config = self._config(self.folder, config_type)
            self._memory = await asyncio.to_thread(memory_type, config)
        return self._memory

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """One mem0 call, its turn taken; a model service that went away is infrastructure
        (retried), anything else mem0 raises is its own failure (scored)."""
        import openai

        async with self._turn:
            memory = await self._mem0()
            try:
                return await getattr(memory, method)(*args, **kwargs)
            except Exception as exc:
                cause: BaseException | None = exc
                while cause is not None:
                    if isinstance(cause, openai.APIConnectionError | openai.InternalServerError):
                        raise EngineUnavailable(f"mem0-oss: model service: {cause}") from exc
                    cause = cause.__cause__
                raise

    # ---- writes ---------------------------------------------------------------------------

    async def _add(
        self, tenant: str, role: str, text: str, tags: dict[str, Any], **ids: str
    ) -> str:
        write = idempotency.current() or uuid.uuid4().hex
        added = await self._call(
            "add",
            [{"role": role, "content": text}],
            user_id=tenant,
            metadata={**tags, WRITE_TAG: write},
            infer=self.settings.infer,
            **ids,
        )
        if not added.get("results"):
            self._empty.setdefault(tenant, set()).add(write)
        return write

    async def _search(self, tenant: str, text: str, k: int) -> list[dict[str, Any]]:
        if not text.strip():
            return []
        found = await self._call(
            "search",
            text,
            filters={"user_id": tenant},
            top_k=k,
            threshold=self.settings.threshold,
        )
        results: list[dict[str, Any]] = found.get("results", [])
        return results

    # ---- fixture face ---------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        tags = {ID_TAG: assertion.id, "source": assertion.source}
        await self._add(tenant, "user", assertion.text, tags)

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        hits = []
        for found in await self._search(tenant, text, k):
            tags = found.get("metadata") or {}
            source = tags.get("source")
            hits.append(
                Hit(
                    text=found.get("memory", ""),
                    source=source,
                    assertion_id=tags.get(ID_TAG),
                    sources=[source] if source else [],
                    score=found.get("score"),
                )
            )
        return QueryResult(hits=hits, abstained=not hits)

    async def reset(self, tenant: str) -> None:
        await self._call("delete_all", user_id=tenant)
        self._empty.pop(tenant, None)

    # ---- lifecycle face -------------------------------------------------------------------

    async def recall(self, tenant: str, text: str) -> list[str]:
        return [m["memory"] for m in await self._search(tenant, text, PACK_K) if m.get("memory")]

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        text = f"{item.title}: {item.text}" if item.title else item.text
        tags = {ID_TAG: item.id, "kind": item.kind}
        ids = {"agent_id": item.agent} if item.agent else {}
        return await self._add(tenant, "user", text, tags, **ids)

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        # mem0 keeps the role itself; only a named speaker is written into the text.
        text = f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text
        tags = {ID_TAG: turn.id} if turn.id else {}
        return await self._add(tenant, turn.role, text, tags, agent_id=agent, run_id=thread)

    async def list(self, tenant: str) -> list[str]:
        found = await self._call("get_all", filters={"user_id": tenant}, top_k=LIST_MAX)
        writes = {
            (m.get("metadata") or {}).get(WRITE_TAG, m.get("id")) for m in found.get("results", [])
        }
        return sorted(writes | self._empty.get(tenant, set()))
