"""A fake of VerifiedState's MCP server, from what VerifiedState publishes and nothing else.

Published (verifiedstate/verifiedstate-plugin: README, CLAUDE.md, skills, hooks; verifiedstate/
vsync README; verifiedstate.ai/docs, /how-it-works, /whitepaper):

- the server is `https://mcp.verifiedstate.ai/mcp`, streamable HTTP, `Authorization: Bearer
  vs_live_...`; the plugin's hook posts a bare JSON-RPC `tools/call` with `Accept:
  application/json` and reads the JSON in the result's text blocks;
- its tools include `memory_ingest` (content, source_type, metadata: the hook's arguments),
  `memory_query`, `memory_verify` (`{assertion_id}`) and `memory_health`;
- the REST twins answer ingest `{artifact_id, span_count, r2_stored}`, extract `{assertions_created,
  assertion_ids}`, verify `{receipt_id, status, final_confidence, conflicts_found}` and query
  `{assertions, receipts, total}` (with `conflicts` on /how-it-works); REST names the namespace
  (`namespace_id`) and the query (`query_text`) in the body;
- assertions are subject-predicate-object claims with confidence, a lifecycle (proposed,
  verified, active, superseded, retracted), valid_from / valid_to, evidence spans, and are
  append-only: nothing is deleted;
- 400, 401 and 404 are documented errors.

Where the sources are silent this fake decides, and the adapter reads it through the tools'
input schemas so a real server that differs fails loudly, not quietly: `memory_ingest` also
extracts (one assertion per ingest, the content itself, answered as `assertion_ids`, the REST
extract's name), optionally taking `statement`, `subject`, `predicate`, `object`, `confidence`,
`valid_from`, `valid_to`, `supersedes`, `retracts`, `challenges` and `evidence` (a retracted
assertion is never returned; a superseded one only to a point-in-time query); `memory_query`
takes `query_text`, `limit` and `as_of` (point in time) and returns each assertion as
`{assertion_id, claim, subject, predicate, object, confidence, status, valid_from, valid_to,
metadata, evidence: {start, end, text}}` with `conflicts: [{assertion_ids, resolved_to}]`.
No rate limit, 402 or 5xx body is published; those come as plain HTTP statuses from
`tests.adapters.fakes`.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.adapters.fakes import Wire, record

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

VS_KEY = "vs_live_contract_test_key_0001"
NAMESPACE = "ns-contract"
SUPERSEDED = "superseded"
RETRACTED = "retracted"


def terms(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def moment(value: str | None) -> datetime | None:
    if value is None:
        return None
    when = datetime.fromisoformat(value)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


@dataclass
class FakeVerifiedState:
    wire: Wire = field(default_factory=Wire)
    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)
    assertions: dict[str, dict[str, Any]] = field(default_factory=dict)
    receipts: list[dict[str, Any]] = field(default_factory=list)
    ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    lock: threading.Lock = field(default_factory=threading.Lock)
    legacy: bool = False  # an older MCP server: `server/discover` is HTTP 400
    id_field: str = "assertion_id"  # how query results name an assertion (or `id`)
    query_lacks: str | None = None  # a field left out of memory_query's reply (malformed)

    def _namespace(self, namespace_id: str | None) -> None:
        from mcp.server.mcpserver.exceptions import ToolError

        if namespace_id not in (None, NAMESPACE):
            raise ToolError(f"namespace {namespace_id} not found")  # the documented 404, as a tool

    def server(self) -> MCPServer:
        # mcp is imported here, not at the top: collection (once per xdist worker) skips it.
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError

        mcp = MCPServer("verifiedstate-fake", log_level="WARNING")

        @mcp.tool(description="Store content as a verified artifact.")
        def memory_ingest(
            content: str,
            source_type: str = "user_input",
            metadata: dict[str, Any] | None = None,
            namespace_id: str | None = None,
            statement: str | None = None,
            subject: str | None = None,
            predicate: str | None = None,
            object: str | None = None,
            confidence: float | None = None,
            valid_from: str | None = None,
            valid_to: str | None = None,
            supersedes: str | None = None,
            retracts: str | None = None,
            challenges: str | None = None,
            evidence: dict[str, int] | None = None,
        ) -> dict[str, Any]:
            self._namespace(namespace_id)
            if not content.strip():
                raise ToolError("content is required")  # the documented 400
            with self.lock:
                artifact = f"art_{next(self.ids)}"
                self.artifacts[artifact] = {"content": content, "source_type": source_type}
                assertion = f"as_{next(self.ids)}"
                for target in (supersedes, retracts, challenges):
                    if target is not None and target not in self.assertions:
                        raise ToolError(f"assertion {target} not found")
                self.assertions[assertion] = {
                    "assertion_id": assertion,
                    "artifact_id": artifact,
                    "claim": statement or content,
                    "subject": subject,
                    "predicate": predicate,
                    "object": object,
                    "confidence": 0.5 if confidence is None else confidence,
                    "status": "active",
                    "valid_from": valid_from,
                    "valid_to": valid_to,
                    "metadata": metadata or {},
                    "evidence": self._span(content, evidence),
                    "supersedes": supersedes,
                    "challenges": challenges,
                    "recorded": len(self.assertions),
                }
                if supersedes is not None:
                    self.assertions[supersedes]["status"] = SUPERSEDED
                if retracts is not None:
                    self.assertions[retracts]["status"] = RETRACTED
            return {
                "artifact_id": artifact,
                "span_count": 1,
                "r2_stored": False,
                "assertions_created": 1,
                "assertion_ids": [assertion],
            }

        @mcp.tool(description="Six-channel retrieval across assertions.")
        def memory_query(
            query_text: str,
            namespace_id: str | None = None,
            limit: int = 10,
            as_of: str | None = None,
        ) -> dict[str, Any]:
            self._namespace(namespace_id)
            if not query_text.strip():
                raise ToolError("query_text is required")
            at = moment(as_of)
            asked = terms(query_text)
            with self.lock:
                pool = [a for a in self.assertions.values() if self._holds(a, at)]
            scored = [(len(asked & terms(a["claim"])), a) for a in pool]
            scored.sort(key=lambda pair: (-pair[0], -pair[1]["recorded"]))  # newest first on ties
            found = [a for score, a in scored if score][:limit]
            ids = {a["assertion_id"] for a in found}
            reply = {
                "assertions": [self._shown(a) for a in found],
                "receipts": {
                    r["assertion_id"]: r for r in self.receipts if r["assertion_id"] in ids
                },
                "conflicts": self._conflicts(ids),
                "total": len(found),
            }
            reply.pop(self.query_lacks or "", None)
            return reply

        @mcp.tool(description="Run the verification ladder and produce a signed receipt.")
        def memory_verify(assertion_id: str, namespace_id: str | None = None) -> dict[str, Any]:
            self._namespace(namespace_id)
            with self.lock:
                held = self.assertions.get(assertion_id)
                if held is None:
                    raise ToolError(f"assertion {assertion_id} not found")
                receipt = {
                    "receipt_id": f"rct_{next(self.ids)}",
                    "assertion_id": assertion_id,
                    "status": "verified",
                    "final_confidence": held["confidence"],
                    "conflicts_found": bool(self._conflicts({assertion_id})),
                }
                self.receipts.append(receipt)
            return {k: v for k, v in receipt.items() if k != "assertion_id"}

        @mcp.tool(description="Namespace health metrics.")
        def memory_health(namespace_id: str | None = None) -> dict[str, Any]:
            self._namespace(namespace_id)
            return {
                "namespace_id": NAMESPACE,
                "artifacts": len(self.artifacts),
                "assertions": len(self.assertions),
                "receipts": len(self.receipts),
            }

        return mcp

    def _span(self, content: str, evidence: dict[str, int] | None) -> dict[str, Any]:
        start, end = (evidence["start"], evidence["end"]) if evidence else (0, len(content))
        return {"start": start, "end": end, "text": content[start:end]}

    def _holds(self, assertion: dict[str, Any], at: datetime | None) -> bool:
        """Current state by default; with `as_of`, what was valid at that moment."""
        if assertion["status"] == RETRACTED:
            return False
        if at is None:
            return assertion["status"] != SUPERSEDED
        begins, ends = moment(assertion["valid_from"]), moment(assertion["valid_to"])
        return (begins is None or begins <= at) and (ends is None or at < ends)

    def _conflicts(self, ids: set[str]) -> list[dict[str, Any]]:
        out = []
        for a in self.assertions.values():
            for old, resolved in ((a["supersedes"], a["assertion_id"]), (a["challenges"], None)):
                if old is not None and (old in ids or a["assertion_id"] in ids):
                    out.append({"assertion_ids": [old, a["assertion_id"]], "resolved_to": resolved})
        return out

    def _shown(self, assertion: dict[str, Any]) -> dict[str, Any]:
        private = ("supersedes", "challenges", "recorded")
        shown = {k: v for k, v in assertion.items() if k not in private}
        shown[self.id_field] = shown.pop("assertion_id")
        return shown

    def app(self) -> FastAPI:
        """The MCP endpoint at `/mcp` behind a bearer check, with faults and a request log."""
        mcp_app = self.server().streamable_http_app(stateless_http=True, json_response=True)

        @asynccontextmanager
        async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
            async with mcp_app.router.lifespan_context(mcp_app):
                yield

        app = FastAPI(lifespan=lifespan)

        @app.middleware("http")
        async def bearer(request: Request, call_next: Any) -> Any:
            if request.headers.get("authorization") != f"Bearer {VS_KEY}":
                error = "Missing or invalid Authorization: Bearer token"
                return JSONResponse({"error": error}, status_code=401)
            if self.legacy and b'"server/discover"' in await request.body():
                return JSONResponse({"error": "Bad Request: unknown method"}, status_code=400)
            return await call_next(request)

        record(app, self.wire)
        app.mount("/", mcp_app)
        return app
