"""`verifiedstate`: VerifiedState's verified memory, through the tools its MCP server serves.

Verified against published docs only: VerifiedState ships no client library, and its public
sources (the `verifiedstate-plugin` and `vsync` repositories, verifiedstate.ai/docs) give the
endpoint (`https://mcp.verifiedstate.ai/mcp`, streamable HTTP, `Authorization: Bearer
vs_live_...`), the tool names (`memory_ingest`, `memory_query`, `memory_verify`,
`memory_health`, ...), the ingest arguments the plugin sends (`content`, `source_type`,
`metadata`) and the REST twins' reply fields (`artifact_id`; `assertion_ids`; `receipt_id`,
`status`, `final_confidence`, `conflicts_found`; `assertions`, `receipts`, `total`, `conflicts`).

Where they are silent, this adapter does not guess blindly: it reads every tool's input schema
once (`tools/list`) and sends only the arguments the server declares. So the fixture's triple,
confidence, validity, evidence span and supersession go along as hints when `memory_ingest`
takes them and are left to VerifiedState's own extraction when it does not; the query text goes
as `query_text` (the REST name) or `query` (the name on /how-it-works), whichever is declared;
a point-in-time query needs an `as_of` argument and is reported unsupported without one; the
namespace goes as `namespace_id` where a tool takes it, and always as the `X-Namespace-ID`
header, as the published client configuration passes it. An assertion's id is read as
`assertion_id` or `id`; a query reply without `assertions`, or an assertion without any text,
is malformed: an error of the case, never an empty (0.0%) answer. The `mcp` client opens with
`server/discover`; an older server that answers it with HTTP 400 gets the `initialize`
handshake instead, as the protocol allows. The reply fields read beyond the
published ones (an assertion's `claim` or `statement`, `metadata`, `evidence {start, end,
text}`, `valid_from` / `valid_to`, and a conflict's `assertion_ids` / `resolved_to`) are this
module's assumptions, kept here so a correction touches this module alone. If `memory_ingest`
answers no `assertion_ids` (the MCP reply is not published; extraction may run later), hits are
still mapped through the metadata memeval wrote, but supersession hints and `conflicts` have no
id of VerifiedState's to name, and those checks fail rather than guess.

The ledger is append-only (the published rule: retract or supersede, never delete), and one
key serves one namespace, so a memeval tenant is a metadata tag: queries ask for more than `k`
and keep the tenant's own, and `reset` forgets memeval's id maps while the assertions stay under
a tag no later run reuses. No idempotency key is published, so a retried ingest may be stored
twice; each carries its write key in metadata and hits show one per write. Only the fixture
face is offered: no published tool lists a tenant's writes, so a lifecycle run could not settle.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

from memeval.engines import idempotency
from memeval.engines.adapters.remote import RemoteEngine, parse
from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.adapters.transport import RemoteError
from memeval.engines.types import (
    Assertion,
    Capability,
    ConflictReport,
    Hit,
    HitSpan,
    QueryResult,
)
from memeval.errors import Unsupported, UsageError

if TYPE_CHECKING:
    from mcp.types import Tool

    from memeval.engines.adapters.mcp_tools import McpTools, Session

TENANT_TAG = "memeval_tenant"
ID_TAG = "memeval_id"
WRITE_TAG = "memeval_write"
NEEDED = ("memory_ingest", "memory_query", "memory_verify")
QUERY_ARGS = ("query_text", "query")
WIDEN = 4  # the namespace holds every tenant: ask for more, keep the tenant's own
SOURCES = "published docs only"
NAMESPACE_HEADER = "X-Namespace-ID"


class VerifiedStateSettings(EngineSettings):
    model_config = SettingsConfigDict(env_prefix="VERIFIEDSTATE_")
    engine = "verifiedstate"
    url: str = Field(
        default="https://mcp.verifiedstate.ai/mcp", description="The MCP endpoint (streamable HTTP)"
    )
    api_key: SecretStr = Field(description="VerifiedState API key (vs_live_...).")
    namespace_id: str | None = Field(
        default=None, description="The namespace, sent to every tool that takes one."
    )


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Ingested(_Reply):
    artifact_id: str
    assertion_ids: list[str] = Field(default_factory=list)


class _Verified(_Reply):
    receipt_id: str | None = None
    status: str = ""
    conflicts_found: bool = False


class _Evidence(_Reply):
    start: int
    end: int
    text: str = ""


class _Found(_Reply):
    assertion_id: str = Field(validation_alias=AliasChoices("assertion_id", "id"))
    claim: str | None = None
    statement: str | None = None
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    confidence: float | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    evidence: _Evidence | None = None

    def text(self) -> str:
        triple = " ".join(p for p in (self.subject, self.predicate, self.object) if p)
        return self.claim or self.statement or triple

    @model_validator(mode="after")
    def _says_something(self) -> _Found:
        """An assertion without a claim, a statement or a triple cannot be scored: the reply
        is malformed, an error of the case, not an empty hit."""
        if not self.text().strip():
            raise ValueError("an assertion without claim, statement or subject-predicate-object")
        return self


class _Conflict(_Reply):
    assertion_ids: list[str]
    resolved_to: str | None = None
    reason: str = ""


class _Results(_Reply):
    assertions: list[_Found]  # a reply without the list is malformed, never "nothing found"
    conflicts: list[_Conflict] = Field(default_factory=list)


class VerifiedStateEngine(RemoteEngine):
    name = "verifiedstate"
    settings_model = VerifiedStateSettings
    verified_against = SOURCES
    capabilities = frozenset(
        {
            Capability.store,
            Capability.query_at,
            Capability.conflicts,
            Capability.provenance,
            Capability.spans,
        }
    )
    notes = (
        "reply fields beyond the published ones are assumed (see the adapter's docstring)",
        "fixture face only: no published tool lists a tenant's writes",
    )

    def __init__(self, settings: VerifiedStateSettings) -> None:
        super().__init__(settings)
        endpoint = httpx.URL(settings.url)
        # the endpoint's path is the MCP route itself, so the transport is based at the origin
        self.transport.base_url = str(endpoint.copy_with(path="/", query=None)).rstrip("/")
        self.namespace = settings.namespace_id
        if self.namespace is not None:  # as the published client configuration passes it
            self.transport.headers[NAMESPACE_HEADER] = self.namespace
        self._tools: McpTools | None = None
        self._schemas: dict[str, set[str]] = {}
        self._theirs: dict[str, dict[str, str]] = defaultdict(dict)  # tenant: ours -> theirs
        self._ours: dict[str, dict[str, str]] = defaultdict(dict)  # tenant: theirs -> ours
        self._texts: dict[str, dict[str, str]] = defaultdict(dict)  # tenant: ours -> text

    @property
    def tools(self) -> McpTools:
        if self._tools is None:
            try:
                from memeval.engines.adapters.mcp_tools import McpTools
            except ImportError:
                raise UsageError(
                    "engine `verifiedstate` needs the `mcp` client library",
                    fix="pip install 'memeval[verifiedstate]'",
                ) from None
            self._tools = McpTools(self.transport, self.settings.url, self.name)
        return self._tools

    async def connect(self) -> None:
        """Learn the tools and their arguments once; a server without the memory tools is
        named, not met later as a string of failed calls."""
        from memeval.engines.adapters.mcp_tools import properties

        async with self.tools.session() as session:
            listed: dict[str, Tool] = await session.list()
        missing = [name for name in NEEDED if name not in listed]
        if missing:
            where = self.settings.url
            raise RemoteError(f"verifiedstate serves no {', '.join(missing)} at {where}")
        self._schemas = {name: properties(tool) for name, tool in listed.items()}

    async def preflight(self) -> None:
        """The tool listing and a health read: a refused key is `AuthRejected`, naming
        VERIFIEDSTATE_API_KEY, before any case runs."""
        await self.ready()
        if "memory_health" in self._schemas:
            async with self.tools.session() as session:
                await self._call(session, "memory_health", {})

    async def _call(self, session: Session, tool: str, wanted: dict[str, Any]) -> dict[str, Any]:
        declared = self._schemas[tool]
        if self.namespace is not None:
            wanted = {"namespace_id": self.namespace, **wanted}
        sent = {k: v for k, v in wanted.items() if k in declared and v is not None}
        return await session.call(tool, sent)

    # ---- fixture face ---------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        mapped = self._theirs[tenant]
        metadata = {
            TENANT_TAG: tenant,
            ID_TAG: assertion.id,
            WRITE_TAG: idempotency.current() or uuid.uuid4().hex,
            "source": assertion.source,
        }
        hints: dict[str, Any] = {
            "content": assertion.excerpt or assertion.text,
            "source_type": "document",
            "metadata": metadata,
            "statement": assertion.text,
            "subject": assertion.subject,
            "predicate": assertion.predicate,
            "object": assertion.object,
            "confidence": assertion.confidence,
            "valid_from": assertion.valid_from.isoformat() if assertion.valid_from else None,
            "valid_to": assertion.valid_to.isoformat() if assertion.valid_to else None,
            "supersedes": mapped.get(assertion.supersedes or ""),
            "retracts": mapped.get(assertion.retracts or ""),
            "challenges": mapped.get(assertion.challenges or ""),
        }
        if assertion.span is not None:
            hints["evidence"] = {"start": assertion.span.start, "end": assertion.span.end}
        await self.ready()
        async with self.tools.session() as session:
            reply = await self._call(session, "memory_ingest", hints)
            ingested = parse(_Ingested, reply, self.name)
            for theirs in ingested.assertion_ids:
                self._ours[tenant][theirs] = assertion.id
                await self._call(session, "memory_verify", {"assertion_id": theirs})
        if ingested.assertion_ids:
            mapped[assertion.id] = ingested.assertion_ids[0]
        self._texts[tenant][assertion.id] = assertion.text

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        return await self._query(tenant, text, None, k)

    async def query_at(self, tenant: str, text: str, as_of: datetime, k: int = 5) -> QueryResult:
        return await self._query(tenant, text, as_of, k)

    async def _find(self, tenant: str, text: str, as_of: datetime | None, k: int) -> _Results:
        await self.ready()
        declared = self._schemas["memory_query"]
        name = next((n for n in QUERY_ARGS if n in declared), None)
        if name is None:
            raise RemoteError("verifiedstate's memory_query takes neither query_text nor query")
        if as_of is not None and "as_of" not in declared:
            raise Unsupported(Capability.query_at)
        asked = {name: text, "limit": k * WIDEN, "as_of": as_of.isoformat() if as_of else None}
        async with self.tools.session() as session:
            return parse(_Results, await self._call(session, "memory_query", asked), self.name)

    async def _query(self, tenant: str, text: str, as_of: datetime | None, k: int) -> QueryResult:
        found = await self._find(tenant, text, as_of, k)
        hits: list[Hit] = []
        writes: set[str] = set()
        for result in found.assertions:
            tags = result.metadata
            if tags.get(TENANT_TAG) != tenant:
                continue  # another tenant's assertion in the shared namespace
            write = str(tags.get(WRITE_TAG, result.assertion_id))
            if write in writes:
                continue  # the same write stored twice by a retry
            writes.add(write)
            hits.append(self._hit(tenant, result))
        return QueryResult(hits=hits[:k], conflicts=self._reports(tenant, found.conflicts))

    def _hit(self, tenant: str, result: _Found) -> Hit:
        source = result.metadata.get("source")
        evidence = result.evidence
        return Hit(
            text=result.text(),
            source=source,
            span=HitSpan(**evidence.model_dump()) if evidence else None,
            confidence=result.confidence,
            assertion_id=result.metadata.get(ID_TAG) or self._ours[tenant].get(result.assertion_id),
            valid_from=result.valid_from,
            valid_to=result.valid_to,
            sources=[source] if source else [],
        )

    def _reports(self, tenant: str, conflicts: list[_Conflict]) -> list[ConflictReport]:
        """Conflicts between this tenant's own assertions, in memeval's ids."""
        ours = self._ours[tenant]
        out = []
        for conflict in conflicts:
            ids = [ours.get(theirs) for theirs in conflict.assertion_ids]
            if len(ids) < 2 or None in ids:
                continue
            resolved = ours.get(conflict.resolved_to or "")
            out.append(ConflictReport(ids=[i for i in ids if i], resolved_to=resolved))
        return out

    async def conflicts(self, tenant: str, assertion_id: str) -> list[ConflictReport]:
        """A fresh receipt says whether the assertion is in conflict; the query on its own
        claim names the other side."""
        theirs = self._theirs[tenant].get(assertion_id)
        if theirs is None:
            return []
        await self.ready()
        async with self.tools.session() as session:
            receipt = await self._call(session, "memory_verify", {"assertion_id": theirs})
        if not parse(_Verified, receipt, self.name).conflicts_found:
            return []
        found = await self._find(tenant, self._texts[tenant][assertion_id], None, 5)
        return [r for r in self._reports(tenant, found.conflicts) if assertion_id in r.ids]

    async def reset(self, tenant: str) -> None:
        for table in (self._theirs, self._ours, self._texts):
            table.pop(tenant, None)
