"""A small CortexDB on the v1 wire memeval assumes (`memeval.engines.adapters.cortex_wire`),
and, with `hosted=True`, the same behind TinyHumans' `/memory/*` routes and envelopes with no
admin or inspector routes. It ranks by shared words within one scope only, indexes a write
`lag` event polls after it lands, and drains an enrichment backlog one step per usage read.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.adapters.fakes import Wire, bearer, record

KEY = "cortex-test-key-123"
ACTOR = "actor-7"
WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


@dataclass
class Stored:
    id: str
    body: dict[str, Any]
    polls_left: int


@dataclass
class FakeCortex:
    hosted: bool = False
    lag: int = 1
    backlog: int = 0  # enrichment jobs pending at the first usage read
    key: str = KEY
    wire: Wire = field(default_factory=Wire)
    scopes: dict[str, list[Stored]] = field(default_factory=dict)
    replies: dict[str, Any] = field(default_factory=dict)  # idempotency key -> first answer
    builds: list[dict[str, Any]] = field(default_factory=list)
    usage_reads: int = 0
    writes: int = 0  # what the fake bills: one call per stored experience, ever
    ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    @property
    def prefix(self) -> str:
        return "/memory" if self.hosted else "/v1"

    def app(self) -> FastAPI:
        app = FastAPI()
        record(app, self.wire)
        p = self.prefix

        async def guard(request: Request) -> JSONResponse | None:
            denied = bearer(request, self.key)
            if denied is not None:
                return denied
            needs_actor = not self.hosted and not request.url.path.endswith("/auth/whoami")
            if needs_actor and request.headers.get("x-cortex-actor") != ACTOR:
                return JSONResponse({"error": "unknown actor"}, status_code=400)
            if request.method == "POST" and not request.headers.get("idempotency-key"):
                return JSONResponse({"error": "Idempotency-Key required"}, status_code=400)
            return None

        def reply(data: Any, status: int = 200) -> JSONResponse:
            body = {"success": True, "data": data} if self.hosted else data
            return JSONResponse(body, status_code=status)

        async def write(request: Request, make: Any) -> JSONResponse:
            denied = await guard(request)
            if denied is not None:
                return denied
            key = request.headers["idempotency-key"]
            if key not in self.replies:  # a retried request is stored once
                self.replies[key] = make(await request.json(), request)
            return reply(self.replies[key])

        @app.post(p + "/experience")
        async def experience(request: Request) -> JSONResponse:
            return await write(request, lambda body, _r: self.store(body, self.lag))

        @app.post(p + "/experience/bulk")
        async def bulk(request: Request) -> JSONResponse:
            def many(body: dict[str, Any], req: Request) -> dict[str, Any]:
                lag = 0 if req.query_params.get("wait") == "indexed" else self.lag
                return {"items": [self.store(item, lag) for item in body["items"]]}

            return await write(request, many)

        @app.get(p + "/events")
        async def events(request: Request) -> JSONResponse:
            denied = await guard(request)
            if denied is not None:
                return denied
            scope = request.query_params["scope"]
            start = int(request.query_params.get("cursor") or 0)
            page, done = [], start
            for stored in self.scopes.get(scope, [])[start:]:
                if stored.polls_left > 0:
                    stored.polls_left -= 1
                    break
                event = {"id": f"e{stored.id}", "type": "experience.indexed"}
                page.append({**event, "experience_id": stored.id})
                done += 1
                if len(page) == 2:  # small pages, so paging is exercised
                    break
            more = done < len(self.scopes.get(scope, []))
            cursor = str(done) if page else request.query_params.get("cursor")
            return reply({"events": page, "next_cursor": cursor if more else None})

        @app.post(p + "/recall")
        async def recall(request: Request) -> JSONResponse:
            denied = await guard(request)
            if denied is not None:
                return denied
            return reply(self.recall(await request.json()))

        @app.post(p + "/forget")
        async def forget(request: Request) -> JSONResponse:
            return await write(request, self.forget)

        @app.post(p + "/beliefs/build")
        async def build(request: Request) -> JSONResponse:
            def make(body: dict[str, Any], _r: Request) -> dict[str, Any]:
                self.builds.append(body)
                texts = [s.body["text"] for s in self.scopes.get(body["scope"], [])]
                beliefs = [{"subject": "memory", "value": t} for t in texts[:2]]
                return {"beliefs": beliefs, "built": len(beliefs)}

            return await write(request, make)

        if not self.hosted:
            self._admin_routes(app, guard)
        return app

    def _admin_routes(self, app: FastAPI, guard: Any) -> None:
        async def answer(request: Request, data: Any) -> JSONResponse:
            denied = await guard(request)
            return denied if denied is not None else JSONResponse(data)

        @app.get("/v1/auth/whoami")
        async def whoami(request: Request) -> JSONResponse:
            return await answer(request, {"actor": ACTOR})

        @app.get("/v1/admin/health")
        async def health(request: Request) -> JSONResponse:
            return await answer(request, {"status": "ok"})

        @app.get("/v1/admin/version")
        async def version(request: Request) -> JSONResponse:
            return await answer(request, {"version": "0.10.4-fake"})

        @app.get("/v1/admin/usage")
        async def usage(request: Request) -> JSONResponse:
            self.usage_reads += 1
            pending = max(0, self.backlog - self.usage_reads + 1)
            calls = self.writes + 100
            return await answer(
                request,
                {
                    "calls": calls,
                    "tokens": calls * 10,
                    "cost_usd": calls * 0.0001,
                    "enrichment": {"pending": pending},
                },
            )

        @app.get("/v1/scopes/list")
        async def scopes(request: Request) -> JSONResponse:
            prefix = request.query_params["prefix"]
            return await answer(request, {"scopes": [s for s in self.scopes if s == prefix]})

        @app.get("/v1/facts")
        async def facts(request: Request) -> JSONResponse:
            stored = self.scopes.get(request.query_params["scope"], [])
            return await answer(request, {"facts": [{"text": s.body["text"]} for s in stored]})

        @app.get("/v1/beliefs")
        async def beliefs(request: Request) -> JSONResponse:
            return await answer(request, {"beliefs": [{"text": "belief: settled"}]})

        @app.get("/v1/conflicts")
        async def conflicts(request: Request) -> JSONResponse:
            scope = request.query_params["scope"]
            target = request.query_params["external_id"]
            found = []
            for s in self.scopes.get(scope, []):
                fact = s.body.get("fact") or {}
                if fact.get("supersedes") == target:
                    newer = s.body["external_id"]
                    found.append({"ids": [target, newer], "resolved_to": newer})
            return await answer(request, {"conflicts": found})

    # ---- behaviour ----------------------------------------------------------------------

    def store(self, body: dict[str, Any], lag: int) -> dict[str, Any]:
        self.writes += 1
        stored = Stored(id=f"x{next(self.ids)}", body=body, polls_left=lag)
        self.scopes.setdefault(body["scope"], []).append(stored)
        return {"id": stored.id, "jobs": [f"job-{stored.id}"] if body["kind"] == "learning" else []}

    def forget(self, body: dict[str, Any], _request: Request) -> dict[str, Any]:
        self.scopes.pop(body["scope"], None)
        return {}

    def recall(self, body: dict[str, Any]) -> dict[str, Any]:
        asked = words(body["query"])
        excluded = {t["text"] for t in body.get("exclude", [])}
        pool = [
            s
            for s in self.scopes.get(body["scope"], [])
            if s.polls_left == 0 and s.body["text"] not in excluded
        ]
        ranked = sorted(pool, key=lambda s: len(asked & words(s.body["text"])), reverse=True)
        items = [
            {
                "id": s.id,
                "text": s.body["text"],
                "external_id": s.body.get("external_id"),
                "source": s.body.get("source"),
                "score": float(len(asked & words(s.body["text"]))),
            }
            for s in ranked[: body["k"]]
        ]
        out: dict[str, Any] = {"items": items, "abstained": not items}
        if body["purpose"] == "context":  # one purpose answers with its own markdown
            out["markdown"] = f"# {body['heading']}\n" + "".join(f"- {i['text']}\n" for i in items)
        return out
