"""A small fake of VerifiedState, on the wire its adapter documents."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.adapters.fake_cortex import words
from tests.adapters.fakes import Wire, bearer, record

VS_KEY = "vs_live_test_key_42"
NAMESPACE = "ns-test"


class Refused(Exception):
    def __init__(self, response: JSONResponse) -> None:
        self.response = response


@dataclass
class FakeVerifiedState:
    wire: Wire = field(default_factory=Wire)
    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)
    assertions: dict[str, dict[str, Any]] = field(default_factory=dict)
    receipts: list[str] = field(default_factory=list)
    ignore_filter: bool = False  # a broken service that returns every tenant's assertions
    ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def app(self) -> FastAPI:
        app = FastAPI()
        record(app, self.wire)

        @app.exception_handler(Refused)
        async def refused(_request: Request, exc: Refused) -> JSONResponse:
            return exc.response

        async def body_of(request: Request) -> dict[str, Any]:
            denied = bearer(request, VS_KEY)
            if denied is not None:
                raise Refused(denied)
            body = await request.json()
            if body.get("namespace_id") != NAMESPACE:
                raise Refused(JSONResponse({"error": "unknown namespace"}, status_code=404))
            return body

        @app.post("/ingest")
        async def ingest(request: Request) -> Any:
            body = await body_of(request)
            artifact = f"art{next(self.ids)}"
            self.artifacts[artifact] = body
            return {"artifact_id": artifact}

        @app.post("/extract")
        async def extract(request: Request) -> Any:
            body = await body_of(request)
            out = []
            for hint in body["assertions"]:
                assertion_id = f"as{next(self.ids)}"
                self.assertions[assertion_id] = hint
                out.append({"assertion_id": assertion_id})
            return {"assertions": out}

        @app.post("/verify")
        async def verify(request: Request) -> Any:
            body = await body_of(request)
            target = body["assertion_id"]
            self.receipts.append(target)
            conflicts = [
                {"assertion_id": other, "resolved_to": other, "reason": "superseded"}
                for other, hint in self.assertions.items()
                if hint.get("supersedes") == target
            ]
            return {
                "receipt_id": f"r{len(self.receipts)}",
                "status": "verified",
                "conflicts": conflicts,
            }

        @app.post("/query")
        async def query(request: Request) -> Any:
            body = await body_of(request)
            tenant = body["filter"]["metadata"]["memeval_tenant"]
            asked = words(body["query"])
            pool = [
                (aid, hint)
                for aid, hint in self.assertions.items()
                if self.ignore_filter or hint["metadata"]["memeval_tenant"] == tenant
            ]
            pool.sort(key=lambda p: len(asked & words(p[1]["statement"])), reverse=True)
            results = [
                {
                    "assertion_id": aid,
                    "statement": hint["statement"],
                    "confidence": hint.get("confidence"),
                    "metadata": hint["metadata"],
                    "evidence": {"start": 0, "end": 3, "text": hint["statement"][:3]},
                }
                for aid, hint in pool[: body["limit"]]
            ]
            return {"results": results, "abstained": not results}

        return app
