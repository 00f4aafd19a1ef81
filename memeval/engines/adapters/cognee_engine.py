"""`cognee`: the cognee library in the worker, on its embedded stores (SQLite, LanceDB and its
graph files) in a folder of this engine's own.

A tenant is a cognee dataset; every write is `add` then `cognify` of that dataset (chunks,
summaries, the knowledge graph, each embedded), and a read is cognee's own `search` over the
tenant's dataset only. The pack is cognee's `CHUNKS` retrieval: the `PACK_K` nearest chunks of
the tenant's writes, best first, cut to memeval's token budget; an empty dataset abstains.
Reset and forget empty the dataset (its graph nodes, vectors and data rows). `list` is the
dataset's data items that memeval's writes produced (cognee keeps one item per distinct text).

Offline, by construction: telemetry is off (`TELEMETRY_DISABLED`), litellm reads its bundled
price map, HuggingFace is offline (cognee looks for a tokenizer named after the embedder), and
tiktoken, which cognee counts every text with, finds its `cl100k_base` and `o200k_base`
encodings in a cache filled from the `bpe-openai` package (a memeval dependency that ships
them byte for byte: tiktoken checks their SHA-256) instead of downloading them.

cognee keeps one configuration per process (its settings and database engines are cached
module state), so one cognee engine is open per worker process at a time, and its calls take
turns on one lock: cognee's pipelines lock per dataset, but its SQLite store is one file.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import uuid
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic_settings import SettingsConfigDict

from memeval.engines import idempotency
from memeval.engines.adapters.library import Ledger, model_service_down
from memeval.engines.adapters.tiktoken_offline import tiktoken_cache
from memeval.engines.pack import PACK_K
from memeval.engines.types import Assertion, Capability, Hit, MemoryItem, QueryResult, Turn
from memeval.errors import UsageError
from memeval.models import NOTE
from memeval.models.local import (
    ModelSettings,
    SearchPacks,
    check_models,
    library_missing,
    said,
    store_folder,
)

_open_engine: CogneeEngine | None = None


class CogneeSettings(ModelSettings):
    model_config = SettingsConfigDict(env_prefix="COGNEE_ENGINE_")
    engine = "cognee"


def _version() -> str:
    try:
        return metadata.version("cognee")
    except metadata.PackageNotFoundError:
        return "not installed"


def _offline_environment(folder: Path) -> None:
    # Each read by cognee, litellm or huggingface_hub at import or first use: set first.
    os.environ["TELEMETRY_DISABLED"] = "1"
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["LITELLM_DROP_PARAMS"] = "True"  # the embedder's `dimensions` is not sent
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["COGNEE_SKIP_CONNECTION_TEST"] = "true"
    # cognee's default: a database per dataset. Off, every dataset shares one vector store
    # and a CHUNKS search filtered to one dataset returned another tenant's chunks.
    os.environ["ENABLE_BACKEND_ACCESS_CONTROL"] = "true"
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache(folder / "tiktoken"))


def _import() -> Any:
    try:
        import cognee
    except ImportError:
        raise library_missing("cognee", "cognee", "cognee") from None
    return cognee


def dataset_name(tenant: str) -> str:
    """cognee names datasets with letters, digits and underscores: the tenant in hex."""
    return f"t_{tenant.encode().hex()}"


class CogneeEngine(SearchPacks):
    name = "cognee"
    settings_model = CogneeSettings
    verified_against = f"cognee {_version()} library on SQLite, LanceDB and Kuzu, in-process"
    capabilities = frozenset({Capability.store, Capability.abstain, Capability.lifecycle})
    notes = (
        "in-process cognee: add + cognify per write, CHUNKS search per read, one dataset per "
        "tenant; models on any OpenAI-compatible URL",
        "one cognee engine per worker process (cognee's configuration is process-wide)",
        f"on the default url, {NOTE}",
    )

    def __init__(self, settings: CogneeSettings) -> None:
        self.settings = settings
        self.folder: Path | None = None
        self._cognee: Any = None
        self._ready = False
        self._turn = asyncio.Lock()
        self._ledger = Ledger()

    async def preflight(self) -> None:
        # Found, not imported: importing cognee takes longer than preflight may.
        if importlib.util.find_spec("cognee") is None:
            raise library_missing("cognee", "cognee", "cognee")
        await check_models(self.name, self.settings)

    async def close(self) -> None:
        global _open_engine
        if _open_engine is self:
            _open_engine = None
        self._cognee = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def _open(self) -> Any:
        global _open_engine
        if self._cognee is not None:
            return self._cognee
        if _open_engine is not None:
            raise UsageError(
                "engine `cognee`: another cognee engine is open in this process",
                fix="close it first; cognee keeps one configuration per process",
            )
        s = self.settings
        self.folder = store_folder(self.name, s.store_dir)
        _offline_environment(self.folder)
        cognee = _import()
        for part in ("system", "data"):
            (self.folder / part).mkdir()
        cognee.config.system_root_directory(str(self.folder / "system"))
        cognee.config.data_root_directory(str(self.folder / "data"))
        # cognee runs its graph and vector stores in child processes by default; a Celery
        # prefork worker is a daemon and may have none, so they run in this process.
        cognee.config.set_graph_database_subprocess_enabled(False)
        cognee.config.set_vector_db_subprocess_enabled(False)
        cognee.config.set_llm_config(
            {
                "llm_provider": "custom",
                "llm_endpoint": s.url,
                "llm_model": f"openai/{s.llm_model}",
                "llm_api_key": s.key,
            }
        )
        cognee.config.set_embedding_config(
            {
                "embedding_provider": "custom",
                "embedding_endpoint": s.embedder_base,
                "embedding_model": f"openai/{s.embedder_model}",
                "embedding_dimensions": s.embedding_dims,
                "embedding_api_key": s.key,
            }
        )
        self._cognee = cognee
        _open_engine = self
        return cognee

    async def _call(self, work: Any) -> Any:
        async with self._turn:
            cognee = self._open()
            if not self._ready:  # cognee's databases and default user, made before any read
                from cognee.modules.engine.operations.setup import setup

                await setup()
                self._ready = True
            try:
                return await work(cognee)
            except Exception as exc:
                down = model_service_down(self.name, exc)
                if down is not None:
                    raise down from exc
                raise

    async def _dataset(self, cognee: Any, tenant: str) -> Any:
        name = dataset_name(tenant)
        found = [d for d in await cognee.datasets.list_datasets() if d.name == name]
        return found[0] if found else None

    async def _data_ids(self, cognee: Any, tenant: str) -> list[str]:
        dataset = await self._dataset(cognee, tenant)
        if dataset is None:
            return []
        return [str(d.id) for d in await cognee.datasets.list_data(dataset.id)]

    # ---- writes ---------------------------------------------------------------------------

    async def _write(self, tenant: str, text: str) -> str:
        write = idempotency.current() or uuid.uuid4().hex
        name = dataset_name(tenant)

        async def add(cognee: Any) -> list[str]:
            before = set(await self._data_ids(cognee, tenant))
            await cognee.add(text, dataset_name=name)
            await cognee.cognify(datasets=[name])
            after = await self._data_ids(cognee, tenant)
            # a text cognee already held adds no item: the write lives in that item
            return [i for i in after if i not in before] or after

        self._ledger.record(tenant, write, await self._call(add))
        return write

    async def _search(self, tenant: str, text: str, k: int) -> list[str]:
        if not text.strip():
            return []

        async def search(cognee: Any) -> list[Any]:
            if await self._dataset(cognee, tenant) is None:
                return []
            found: list[Any] = await cognee.search(
                query_text=text,
                query_type=cognee.SearchType.CHUNKS,
                datasets=[dataset_name(tenant)],
                top_k=k,
            )
            return found

        return [t for t in (_chunk_text(r) for r in await self._call(search)) if t]

    # ---- fixture face ---------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        await self._write(tenant, assertion.text)

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        hits = [Hit(text=t) for t in await self._search(tenant, text, k)]
        return QueryResult(hits=hits, abstained=not hits)

    async def reset(self, tenant: str) -> None:
        async def empty(cognee: Any) -> None:
            dataset = await self._dataset(cognee, tenant)
            if dataset is not None:
                await cognee.datasets.empty_dataset(dataset.id)

        await self._call(empty)
        self._ledger.drop(tenant)

    # ---- lifecycle face -------------------------------------------------------------------

    async def recall(self, tenant: str, text: str) -> list[str]:
        return await self._search(tenant, text, PACK_K)

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        return await self._write(tenant, f"{item.title}: {item.text}" if item.title else item.text)

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        return await self._write(tenant, said(turn))

    async def list(self, tenant: str) -> list[str]:
        ids = await self._call(lambda cognee: self._data_ids(cognee, tenant))
        return self._ledger.visible(tenant, ids)


def _chunk_text(result: Any) -> str:
    """A CHUNKS result: the chunk as a dict (or wrapped in `search_result`)."""
    if isinstance(result, dict):
        inner = result.get("search_result", result)
        if isinstance(inner, dict):
            return str(inner.get("text") or "")
        if isinstance(inner, list):
            return " ".join(_chunk_text(r) for r in inner)
        return str(inner or "")
    return str(getattr(result, "text", "") or "")
