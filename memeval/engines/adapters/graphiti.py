"""`graphiti`: Zep's `graphiti-core` temporal knowledge graph, in the worker process, on Kuzu.

Kuzu is an embedded graph database (a folder, no server), installed from PyPI with
`graphiti-core[kuzu]`; its full-text search is built in, so nothing is fetched at run time.
Graphiti's LLM, embedder and reranker are whatever OpenAI-compatible service `url` names
(`memeval models serve` by default) through graphiti's generic client, which asks for
structured output with `json_schema`. Graphiti's telemetry is switched off before import
(`GRAPHITI_TELEMETRY_ENABLED=false`).

A tenant is a Kuzu database of its own (below), in which its writes carry its graphiti
`group_id`. Every write is an episode with its own time as the reference time: an assertion at
its `valid_from` (else when it was recorded), a document at its `at`, a turn at its `at` as a
message `speaker: text`. Graphiti extracts entities and facts (edges) from each episode with
their validity (`valid_at`, `invalid_at`). Queries go through graphiti's hybrid search (BM25 and
cosine, fused by reciprocal rank) over edges and episodes; a hit is a fact with its validity and
the episodes it came from, or an episode itself. `query_at` is graphiti's own date filter: facts
valid at that time (begun, not yet ended) and episodes that had happened by then. Search keeps
only matches above graphiti's minimum score, so an empty result is an abstention. Reset and
forget remove the tenant's database; `list` is the group's episodes.

Two gaps in graphiti-core 0.31's Kuzu driver are bridged here, not patched in the library:
it has no `_database` (graphiti reads it to scope a request; Kuzu has one database, so any
value serves), and its `build_indices_and_constraints` does nothing, so the full-text indexes
are created through the driver's own maintenance operations.

Kuzu 0.11's full-text query reads `*` and `?` as wildcards, and graphiti passes the text as it
is, so a question ("What did Nate win?") had its last word turned into a pattern (`win.`, one
letter longer) that never matched its own term, and took Kuzu's pattern path, which fails at
random (`unordered_map::at` from `QUERY_FTS_INDEX`, the error that preceded the segfault on
LoCoMo's conv-42; graphiti's own searches while writing, on facts holding a `?`, take it too).
Every full-text query leaves through the driver here with those two characters as spaces
(`fts_text`).

Why a database a tenant, not one shared by group: Kuzu's full-text indexes keep the entries of
deleted rows (a forgotten tenant's stale entries crowded a later tenant's episodes out of
graphiti's top matches), and rebuilding the indexes after a delete, the way around that, broke
Kuzu 0.11 itself: a segfault in `CREATE_FTS_INDEX` by the second or third tenant forgotten in
one process, and `unordered_map::at` from a later `QUERY_FTS_INDEX` in a database opened again
(both seen on LoCoMo's development split). Kuzu is no longer maintained upstream and graphiti
deprecates its driver. A database per tenant needs no delete: reset closes it and removes its
folder. Graphiti's own group scoping still applies inside it.

Writes and reads of a tenant take turns on its asyncio lock: Kuzu runs one write transaction
at a time.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from datetime import UTC, datetime
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from memeval.engines.pack import PACK_K
from memeval.engines.types import (
    Assertion,
    Capability,
    Hit,
    MemoryItem,
    QueryResult,
    Turn,
)
from memeval.errors import EngineUnavailable
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
    from graphiti_core import Graphiti
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.search.search_config import SearchResults
    from graphiti_core.search.search_filters import SearchFilters

FIXTURE = "fixture"


class GraphitiSettings(ModelSettings):
    model_config = SettingsConfigDict(env_prefix="GRAPHITI_")
    engine = "graphiti"
    small_model: str | None = Field(
        default=None, description="Graphiti's small model, for light prompts (default: llm_model)."
    )


def _graphiti_version() -> str:
    try:
        return metadata.version("graphiti-core")
    except metadata.PackageNotFoundError:
        return "not installed"


def _import_graphiti() -> None:
    os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"  # read when an event is sent
    try:
        import graphiti_core  # noqa: F401
        import kuzu  # noqa: F401
    except ImportError:
        raise library_missing("graphiti", "graphiti-core[kuzu]", "graphiti") from None


class GraphitiEngine(SearchPacks):
    name = "graphiti"
    settings_model = GraphitiSettings
    verified_against = f"graphiti-core {_graphiti_version()} library on embedded Kuzu, in-process"
    capabilities = frozenset(
        {
            Capability.store,
            Capability.query_at,
            Capability.abstain,
            Capability.provenance,
            Capability.lifecycle,
        }
    )
    notes = (
        "in-process graphiti-core on embedded Kuzu; models on any OpenAI-compatible URL",
        "query_at: facts valid then (graphiti's valid_at/invalid_at), episodes that had happened",
        f"on the default url, {NOTE}",
    )

    def __init__(self, settings: GraphitiSettings) -> None:
        self.settings = settings
        self.folder: Path | None = None  # the engine's: a folder in it a tenant's database
        self._graphs: dict[str, Graphiti] = {}
        self._turns: dict[str, asyncio.Lock] = {}

    async def preflight(self) -> None:
        _import_graphiti()
        await check_models(self.name, self.settings)

    async def close(self) -> None:
        for tenant in list(self._graphs):
            await self._shut(tenant)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    async def _open(self, tenant: str) -> Graphiti:
        if tenant in self._graphs:
            return self._graphs[tenant]
        _import_graphiti()
        from graphiti_core import Graphiti
        from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
        from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
        from graphiti_core.llm_client.config import LLMConfig
        from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient

        s = self.settings
        if self.folder is None:
            self.folder = store_folder(self.name, s.store_dir)
        place = self.folder / group_id(tenant)
        place.mkdir(exist_ok=True)
        driver = await asyncio.to_thread(_driver_class(), db=str(place / "graph.kuzu"))
        driver._database = ""  # one database per Kuzu folder: any name scopes every request
        llm = LLMConfig(api_key=s.key, base_url=s.url, model=s.llm_model, small_model=s.small_model)
        embedder = OpenAIEmbedderConfig(
            api_key=s.key,
            base_url=s.embedder_base,
            embedding_model=s.embedder_model,
            embedding_dim=s.embedding_dims,
        )
        graph = Graphiti(
            graph_driver=driver,
            llm_client=OpenAIGenericClient(config=llm),
            embedder=OpenAIEmbedder(embedder),
            cross_encoder=OpenAIRerankerClient(config=llm),
        )
        await driver.graph_ops.build_indices_and_constraints(driver)
        self._graphs[tenant] = graph
        return graph

    async def _shut(self, tenant: str) -> None:
        """Close the tenant's database and remove its folder. graphiti's `close` leaves Kuzu's
        connection and database open (it relies on garbage collection), so they are closed
        here: the folder is removed next."""
        from graphiti_core.driver.kuzu_driver import KuzuDriver

        graph = self._graphs.pop(tenant, None)
        if graph is not None and isinstance(graph.driver, KuzuDriver):
            await asyncio.to_thread(graph.driver.client.close)
            await asyncio.to_thread(graph.driver.db.close)
        if self.folder is not None:
            shutil.rmtree(self.folder / group_id(tenant), ignore_errors=True)

    async def _call(self, tenant: str, work: Any) -> Any:
        """Run `work(graph)` on the tenant's graph in turn; a model service that went away is
        infrastructure."""
        import openai

        async with self._turns.setdefault(tenant, asyncio.Lock()):
            graph = await self._open(tenant)
            try:
                return await work(graph)
            except (openai.APIConnectionError, openai.InternalServerError) as exc:
                raise EngineUnavailable(f"graphiti: model service: {exc}") from exc

    # ---- writes ---------------------------------------------------------------------------

    async def _episode(
        self, tenant: str, name: str, body: str, source: str, at: datetime | None, message: bool
    ) -> str:
        from graphiti_core.nodes import EpisodeType

        async def add(graph: Graphiti) -> str:
            added = await graph.add_episode(
                name=name,
                episode_body=body,
                source_description=source,
                reference_time=at or datetime.now(UTC),
                source=EpisodeType.message if message else EpisodeType.text,
                group_id=group_id(tenant),
            )
            return str(added.episode.uuid)

        uuid: str = await self._call(tenant, add)
        return uuid

    async def _search(
        self, tenant: str, text: str, k: int, filters: SearchFilters | None = None
    ) -> SearchResults | None:
        if not text.strip():
            return None
        from graphiti_core.search.search_config_recipes import COMBINED_HYBRID_SEARCH_RRF

        config = COMBINED_HYBRID_SEARCH_RRF.model_copy(update={"limit": k})

        async def search(graph: Graphiti) -> SearchResults:
            return await graph.search_(
                text, config=config, group_ids=[group_id(tenant)], search_filter=filters
            )

        found: SearchResults = await self._call(tenant, search)
        return found

    async def _hits(
        self, tenant: str, found: SearchResults | None, k: int, as_of: datetime | None
    ) -> list[Hit]:
        """Facts first (what graphiti distilled, with validity), then the episodes they did not
        already cover, each traced to the episodes it came from."""
        if found is None:
            return []
        episodes = {e.uuid: e for e in found.episodes}
        wanted = {u for edge in found.edges for u in edge.episodes if u not in episodes}
        if wanted:
            from graphiti_core.nodes import EpisodicNode

            async def fetch(graph: Graphiti) -> list[EpisodicNode]:
                nodes: list[EpisodicNode] = await EpisodicNode.get_by_uuids(
                    graph.driver, sorted(wanted)
                )
                return nodes

            episodes.update({e.uuid: e for e in await self._call(tenant, fetch)})
        hits: list[Hit] = []
        for edge in found.edges:
            origins = [episodes[u] for u in edge.episodes if u in episodes]
            sources = list(dict.fromkeys(e.source_description for e in origins))
            hits.append(
                Hit(
                    text=edge.fact,
                    source=sources[0] if sources else None,
                    sources=sources,
                    assertion_id=origins[0].name if origins else None,
                    valid_from=edge.valid_at,
                    valid_to=edge.invalid_at,
                )
            )
        shown = {h.text for h in hits}
        for episode in found.episodes:
            if episode.content in shown or (as_of is not None and episode.valid_at > as_of):
                continue
            hits.append(
                Hit(
                    text=episode.content,
                    source=episode.source_description,
                    sources=[episode.source_description],
                    assertion_id=episode.name,
                    valid_from=episode.valid_at,
                )
            )
        return hits[:k]

    # ---- fixture face ---------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        at = assertion.valid_from or assertion.recorded_at
        await self._episode(tenant, assertion.id, assertion.text, assertion.source, at, False)

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        hits = await self._hits(tenant, await self._search(tenant, text, k), k, None)
        return QueryResult(hits=hits, abstained=not hits)

    async def query_at(self, tenant: str, text: str, as_of: datetime, k: int = 5) -> QueryResult:
        from graphiti_core.search.search_filters import (
            ComparisonOperator,
            DateFilter,
            SearchFilters,
        )

        begun = [[DateFilter(date=as_of, comparison_operator=ComparisonOperator.less_than_equal)]]
        open_then = [
            [DateFilter(date=as_of, comparison_operator=ComparisonOperator.greater_than)],
            [DateFilter(comparison_operator=ComparisonOperator.is_null)],
        ]
        filters = SearchFilters(valid_at=begun, invalid_at=open_then)
        hits = await self._hits(tenant, await self._search(tenant, text, k, filters), k, as_of)
        return QueryResult(hits=hits, abstained=not hits)

    async def reset(self, tenant: str) -> None:
        async with self._turns.setdefault(tenant, asyncio.Lock()):
            await self._shut(tenant)

    # ---- lifecycle face -------------------------------------------------------------------

    async def recall(self, tenant: str, text: str) -> list[str]:
        hits = await self._hits(tenant, await self._search(tenant, text, PACK_K), PACK_K, None)
        return [h.text for h in hits]

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        body = f"{item.title}: {item.text}" if item.title else item.text
        return await self._episode(tenant, item.id, body, item.kind, item.at, False)

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        name = turn.id or f"{thread}:{turn.at.isoformat()}"
        return await self._episode(tenant, name, said(turn), f"{agent} in {thread}", turn.at, True)

    async def list(self, tenant: str) -> list[str]:
        from graphiti_core.nodes import EpisodicNode

        async def episodes(graph: Graphiti) -> list[EpisodicNode]:
            nodes: list[EpisodicNode] = await EpisodicNode.get_by_group_ids(
                graph.driver, [group_id(tenant)]
            )
            return nodes

        return sorted(e.uuid for e in await self._call(tenant, episodes))


WILDCARDS = str.maketrans("*?", "  ")


def fts_text(text: str) -> str:
    """Text for Kuzu's full-text query with its wildcards (`*`, `?`) as spaces: its tokenizer
    drops other punctuation the same way, so the words are the ones the text holds."""
    return text.translate(WILDCARDS)


@cache
def _driver_class() -> type[KuzuDriver]:
    """graphiti's Kuzu driver, with every full-text query's text through `fts_text` (each
    passes it as `$query`)."""
    from graphiti_core.driver.kuzu_driver import KuzuDriver

    class Driver(KuzuDriver):
        async def execute_query(self, cypher_query_: str, **kwargs: Any) -> Any:
            if "QUERY_FTS_INDEX" in cypher_query_ and isinstance(kwargs.get("query"), str):
                kwargs["query"] = fts_text(kwargs["query"])
            return await super().execute_query(cypher_query_, **kwargs)

    return Driver


def group_id(tenant: str) -> str:
    """The tenant as a graphiti group id, which may hold only letters, digits, `-` and `_`:
    every other character (and `_` itself) becomes `_hex_`, so two tenants never share one."""
    return "".join(
        ch if ch.isascii() and (ch.isalnum() or ch == "-") else f"_{ord(ch):x}_" for ch in tenant
    )
