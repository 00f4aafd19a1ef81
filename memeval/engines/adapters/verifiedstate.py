"""`verifiedstate`: VerifiedState's verified-memory API, on the fixture face.

Public material names the base URL (`api.verifiedstate.ai`), the bearer key in
`VERIFIEDSTATE_API_KEY`, the namespace in `VERIFIEDSTATE_NAMESPACE_ID`, and the pipeline
ingest, extract, verify (an Ed25519-signed receipt per assertion), query. It does not publish
the REST bodies, so these are memeval's assumptions, kept in this module:

- `POST /ingest {namespace_id, content, source_type, metadata}` -> `{artifact_id}`;
- `POST /extract {namespace_id, artifact_id, assertions: [hint]}` -> `{assertions:
  [{assertion_id}]}`; memeval hands over the fixture's own triple, validity and
  supersession as hints, so the score measures memory, not extraction;
- `POST /verify {namespace_id, assertion_id}` -> `{receipt_id, status, conflicts:
  [{assertion_id, resolved_to?, reason?}]}`: the receipt's conflicts become `conflicts`;
- `POST /query {namespace_id, query, limit, as_of?, filter}` -> `{results: [...],
  abstained?}`, each result an assertion with its statement, confidence, validity,
  `evidence` span and the metadata memeval wrote.

A namespace is one per key, so a memeval tenant is a metadata tag that every query filters
on; results carrying another tenant's tag are dropped here as well, so a service that ignored
the filter would show as missing hits, never as a leak into a score. The ledger is
append-only: `reset` forgets memeval's own id map, and the tenant's assertions stay in the
namespace under a tag no later run reuses.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import SettingsConfigDict

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

TENANT_TAG = "memeval_tenant"
ID_TAG = "memeval_id"


class VerifiedStateSettings(EngineSettings):
    model_config = SettingsConfigDict(env_prefix="VERIFIEDSTATE_")
    engine = "verifiedstate"
    url: str = Field(default="https://api.verifiedstate.ai", description="The API's base URL.")
    api_key: SecretStr = Field(description="VerifiedState API key (vs_live_...).")
    namespace_id: str = Field(min_length=1, description="The namespace every call names.")


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Artifact(_Reply):
    artifact_id: str


class _Extracted(_Reply):
    class One(_Reply):
        assertion_id: str

    assertions: list[One] = Field(default_factory=list)


class _Verified(_Reply):
    class Conflict(_Reply):
        assertion_id: str
        resolved_to: str | None = None
        reason: str = ""

    receipt_id: str | None = None
    status: str = ""
    conflicts: list[Conflict] = Field(default_factory=list)


class _Result(_Reply):
    class Evidence(_Reply):
        start: int
        end: int
        text: str

    assertion_id: str
    statement: str
    confidence: float | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    source: str | None = None
    score: float | None = None
    evidence: Evidence | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class _Results(_Reply):
    results: list[_Result] = Field(default_factory=list)
    abstained: bool = False


class VerifiedStateEngine(RemoteEngine):
    name = "verifiedstate"
    settings_model = VerifiedStateSettings
    capabilities = frozenset(
        {
            Capability.store,
            Capability.query_at,
            Capability.conflicts,
            Capability.abstain,
            Capability.provenance,
            Capability.spans,
        }
    )

    def __init__(self, settings: VerifiedStateSettings) -> None:
        super().__init__(settings)
        self.namespace = settings.namespace_id
        self._theirs: dict[str, dict[str, str]] = defaultdict(dict)  # tenant: ours -> theirs
        self._ours: dict[str, dict[str, str]] = defaultdict(dict)  # tenant: theirs -> ours

    async def _post(self, path: str, body: dict[str, Any]) -> Any:
        return await self.request("POST", path, json={"namespace_id": self.namespace, **body})

    async def store(self, tenant: str, assertion: Assertion) -> None:
        tags = {TENANT_TAG: tenant, ID_TAG: assertion.id, "source": assertion.source}
        artifact = parse(
            _Artifact,
            await self._post(
                "/ingest",
                {
                    "content": assertion.excerpt or assertion.text,
                    "source_type": "document",
                    "metadata": tags,
                },
            ),
            self.name,
        )
        extracted = parse(
            _Extracted,
            await self._post(
                "/extract",
                {
                    "artifact_id": artifact.artifact_id,
                    "assertions": [self._hint(tenant, assertion)],
                },
            ),
            self.name,
        )
        if not extracted.assertions:
            raise RemoteError(f"verifiedstate extracted nothing from `{assertion.id}`")
        for one in extracted.assertions:
            self._ours[tenant][one.assertion_id] = assertion.id
        self._theirs[tenant][assertion.id] = extracted.assertions[0].assertion_id
        for one in extracted.assertions:
            await self._post("/verify", {"assertion_id": one.assertion_id})

    def _hint(self, tenant: str, assertion: Assertion) -> dict[str, Any]:
        mapped = self._theirs[tenant]
        hint: dict[str, Any] = {
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
            "metadata": {TENANT_TAG: tenant, ID_TAG: assertion.id, "source": assertion.source},
        }
        if assertion.span is not None:
            hint["evidence"] = {"start": assertion.span.start, "end": assertion.span.end}
        return {k: v for k, v in hint.items() if v is not None}

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        return await self._query(tenant, text, None, k)

    async def query_at(self, tenant: str, text: str, as_of: datetime, k: int = 5) -> QueryResult:
        return await self._query(tenant, text, as_of, k)

    async def _query(self, tenant: str, text: str, as_of: datetime | None, k: int) -> QueryResult:
        body: dict[str, Any] = {
            "query": text,
            "limit": k,
            "filter": {"metadata": {TENANT_TAG: tenant}},
        }
        if as_of is not None:
            body["as_of"] = as_of.isoformat()
        found = parse(_Results, await self._post("/query", body), self.name)
        mine = [r for r in found.results if r.metadata.get(TENANT_TAG) == tenant]
        return QueryResult(hits=[self._hit(tenant, r) for r in mine], abstained=found.abstained)

    def _hit(self, tenant: str, result: _Result) -> Hit:
        source = result.metadata.get("source") or result.source
        evidence = result.evidence
        return Hit(
            text=result.statement,
            source=source,
            span=HitSpan(**evidence.model_dump()) if evidence else None,
            confidence=result.confidence,
            assertion_id=result.metadata.get(ID_TAG) or self._ours[tenant].get(result.assertion_id),
            valid_from=result.valid_from,
            valid_to=result.valid_to,
            sources=[source] if source else [],
            score=result.score,
        )

    async def conflicts(self, tenant: str, assertion_id: str) -> list[ConflictReport]:
        """The conflicts on a fresh receipt for the assertion, in memeval's ids."""
        theirs = self._theirs[tenant].get(assertion_id)
        if theirs is None:
            return []
        verified = parse(
            _Verified, await self._post("/verify", {"assertion_id": theirs}), self.name
        )
        ours = self._ours[tenant]
        return [
            ConflictReport(
                ids=[assertion_id, ours.get(c.assertion_id, c.assertion_id)],
                resolved_to=ours.get(c.resolved_to, c.resolved_to) if c.resolved_to else None,
                reason=c.reason,
            )
            for c in verified.conflicts
        ]

    async def reset(self, tenant: str) -> None:
        self._theirs.pop(tenant, None)
        self._ours.pop(tenant, None)
