"""TinyHumans' hosted backend on 127.0.0.1: CortexDB's log behind `/memory/*`, and the document
API its own SDK calls.

Sources: the `tinyhumansai` 0.5.6 SDK (`client.py`: its routes, bodies, the `{success, data}`
envelope it unwraps and the `error` it raises from) and TinyMemory's hosted doubles and specs
(`cortex/testing/routes.rs`, `docs/specs/tinyhumans-hosted-cortex.md`), measured against the
live backend:

- every answer is `{"success": true, "data": ...}`; a failure `{"success": false, "error",
  "errorCode"}`. Engine refusals are relayed in the backend's own vocabulary: a 422 becomes a
  400 `BAD_REQUEST`, a CortexDB 409 a 400 `CONFLICT`;
- the bearer is the account's JWT or `tiny_live_` key; an account out of credit answers every
  request `402 USER_INSUFFICIENT_CREDITS`; each stored write spends one credit;
- scopes and prefixes must be `type:id` segments of `[A-Za-z0-9_-]`, at most 31 (400);
- the event routes are `memory/experience` (one event per request, no bulk, no `?wait=`),
  `memory/events`, `memory/recall`, `memory/forget` and `memory/scopes`; an `Idempotency-Key`
  header is a claim taken before the write is forwarded, and a replayed claim is `409
  CONFLICT`, never forwarded;
- the SDK's document API: `memory/insert` (upsert by namespace and document id),
  `memory/query`, `memory/recall` with a `namespace` body, `memory/admin/delete` (a whole
  namespace) and `GET memory/documents`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.adapters.fake_cortex import CortexLog, Refused, words
from tests.adapters.fakes import Wire, record

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0ZXN0In0.c2lnbmF0dXJl"
SEGMENT = re.compile(r"^[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$")
MAX_SEGMENTS = 31
DOCUMENT_FIELDS = ("title", "content", "namespace", "documentId")
RELAYED = {402: (402, "USER_INSUFFICIENT_CREDITS"), 404: (404, "NOT_FOUND"), 409: (400, "CONFLICT")}


@dataclass
class FakeTinyHumans:
    log: CortexLog = field(default_factory=CortexLog)
    key: str = JWT
    credits: int = 1_000_000
    wire: Wire = field(default_factory=Wire)
    claims: set[str] = field(default_factory=set)
    documents: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    recall_shape: Literal["hosted", "sdk"] = "hosted"  # sdk: only the SDK's recall body

    def app(self) -> FastAPI:
        app = FastAPI()
        record(app, self.wire)

        @app.exception_handler(Refused)
        async def refused(_request: Request, exc: Refused) -> JSONResponse:
            return fail(*relayed(exc), exc.message)

        def gate(request: Request) -> None:
            if request.headers.get("authorization") != f"Bearer {self.key}":
                raise Refused(401, "UNAUTHORIZED", "sign in again")
            if self.credits <= 0:
                raise Refused(402, "USER_INSUFFICIENT_CREDITS", "top up to continue")

        async def body_of(request: Request) -> dict[str, Any]:
            gate(request)
            body = await request.json()
            if not isinstance(body, dict):
                raise Refused(400, "BAD_REQUEST", "a JSON object")
            return body

        @app.post("/memory/experience")
        async def experience(request: Request) -> JSONResponse:
            body = await body_of(request)
            check_scope(body.get("scope"))
            claim = request.headers.get("idempotency-key")
            if claim is not None:
                if claim in self.claims:
                    return fail(409, "CONFLICT", "this Idempotency-Key was already used")
                self.claims.add(claim)
            ack = self.log.append(body, None)
            if not ack["replayed_from_idempotency"]:
                self.credits -= 1
            return ok(ack, 202)

        @app.get("/memory/events")
        async def events(request: Request) -> JSONResponse:
            gate(request)
            if sum(k == "labels" for k, _ in request.query_params.multi_items()) > 1:
                raise Refused(400, "VALIDATION_ERROR", "labels is one comma-separated value")
            check_scope(request.query_params.get("scope"))
            return ok(self.log.page(dict(request.query_params)))

        @app.post("/memory/recall")
        async def recall(request: Request) -> JSONResponse:
            body = await body_of(request)
            if "namespace" in body and "scope" not in body:  # the SDK's master-node recall
                return ok(self.chunks(body["namespace"], "", body.get("maxChunks", 10)))
            if self.recall_shape == "sdk":
                raise Refused(400, "VALIDATION_ERROR", "namespace is required")
            check_scope(body.get("scope"))
            return ok(self.log.recall(body))

        @app.post("/memory/forget")
        async def forget(request: Request) -> JSONResponse:
            body = await body_of(request)
            check_scope(body.get("scope"))
            return ok(self.log.forget(body))

        @app.get("/memory/scopes")
        async def scopes(request: Request) -> JSONResponse:
            gate(request)
            prefix = request.query_params.get("prefix", "")
            if prefix:
                check_scope(prefix)
            held = sorted(
                {
                    s.event["scope"]
                    for s in self.log.events
                    if s.event["scope"] == prefix or s.event["scope"].startswith(prefix + "/")
                }
            )
            return ok({"scopes": held[: int(request.query_params.get("limit") or 50)]})

        self._document_routes(app, body_of, gate)
        return app

    def _document_routes(self, app: FastAPI, body_of: Any, gate: Any) -> None:
        @app.post("/memory/insert")
        async def insert(request: Request) -> JSONResponse:
            body = await body_of(request)
            missing = [
                k for k in ("title", "content", "namespace", "documentId") if not body.get(k)
            ]
            if missing:
                raise Refused(400, "VALIDATION_ERROR", f"missing {', '.join(missing)}")
            key = (body["namespace"], body["documentId"])
            status = "updated" if key in self.documents else "created"
            self.documents[key] = body
            self.credits -= 1
            return ok({"status": status, "documentId": body["documentId"]})

        @app.post("/memory/query")
        async def query(request: Request) -> JSONResponse:
            body = await body_of(request)
            return ok(self.chunks(body["namespace"], body.get("query", ""), body["maxChunks"]))

        @app.post("/memory/admin/delete")
        async def delete(request: Request) -> JSONResponse:
            body = await body_of(request)
            gone = [k for k in self.documents if k[0] == body["namespace"]]
            for key in gone:
                del self.documents[key]
            return ok({"nodesDeleted": len(gone)})

        @app.get("/memory/documents")
        async def documents(request: Request) -> JSONResponse:
            gate(request)
            namespace = request.query_params.get("namespace")
            rows = [d for (ns, _), d in self.documents.items() if namespace in (None, ns)]
            return ok({"documents": rows, "total": len(rows)})

    def chunks(self, namespace: str, query: str, limit: int) -> dict[str, Any]:
        asked = words(query)
        held = [d for (ns, _), d in self.documents.items() if ns == namespace]
        ranked = sorted(held, key=lambda d: -len(asked & words(d["content"])))
        chunks = [
            {"documentId": d["documentId"], "title": d["title"], "content": d["content"]}
            for d in ranked[:limit]
            if not asked or asked & words(d["content"])
        ]
        context = "\n\n".join(c["content"] for c in chunks)
        return {"context": {"chunks": chunks}, "llmContextMessage": context}


def relayed(exc: Refused) -> tuple[int, str]:
    """The backend's answer to a refusal: its own, or the engine's in the backend's words."""
    if exc.status in RELAYED:
        return RELAYED[exc.status]
    if exc.status in (400, 401):
        return exc.status, exc.code
    return (400, "BAD_REQUEST") if exc.status < 500 else (502, "UPSTREAM_UNAVAILABLE")


def check_scope(scope: Any) -> None:
    segments = scope.split("/") if isinstance(scope, str) and scope else []
    if not segments or len(segments) > MAX_SEGMENTS or not all(map(SEGMENT.match, segments)):
        raise Refused(400, "BAD_REQUEST", f"scope {scope!r} is not type:id segments")


def ok(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse({"success": True, "data": data}, status_code=status)


def fail(status: int, code: str, message: str) -> JSONResponse:
    body = {"success": False, "error": message, "errorCode": code}
    return JSONResponse(body, status_code=status)
