"""A fake of the Mem0 platform API, written from mem0's own sources, never from our adapter.

Sources: the official client `mem0ai` 2.2.1 (`mem0/client/main.py`, `types.py`, `utils.py`,
`mem0/exceptions.py`) and mem0's published OpenAPI document and API reference
(`docs/openapi.json`, `docs/api-reference/**` in mem0ai/mem0). What they fix, and this fake
repeats:

- `Authorization: Token <key>`; the clients ping `GET /v1/ping/` while they are constructed
  and a refused key answers 401 `{"detail": ...}` there and on every route.
- `POST /v3/memories/add/` takes the entity ids (`user_id`, `agent_id`, `app_id`, `run_id`) at
  the top level, at least one of them, and queues the write: `{message, status: PENDING,
  event_id}`. `GET /v1/event/{id}/` reports PENDING, then SUCCEEDED with `results` of
  `{id, data: {memory}, event: ADD}` (or FAILED with `error`); a queued write is searchable only
  once its event has succeeded. With `infer: false` the OpenAPI schema says the write is stored
  synchronously and answered with `results`; mem0's own plugin docs say such a write also
  returns an event id, so `sync_verbatim=False` plays that variant.
- `POST /v3/memories/search/` and `POST /v3/memories/` want the ids inside `filters` (which
  accept AND / OR / NOT and comparison operators) and refuse top-level ids with 400. Search
  drops results under `threshold` (0.1 by default) and returns `top_k` (10). The listing is
  paged with `page` / `page_size` query parameters (at most 200) into `{count, next,
  previous, results}`, and names the run `session_id` where search calls it `run_id`.
- `DELETE /v1/memories/?user_id=...` needs at least one filter and queues the deletion.
- 400 bodies are `{"error", "details": {"message"}}`, 404 on an event `{"error"}`.

What no source says, and is this fake's choice: a page past the last answers DRF's 404
`{"detail": "Invalid page."}` (the API is Django REST framework by its shapes); `infer: true`
runs no model here, so every message is stored as one memory; relevance is word overlap.
Faults (401, 402, 429 with Retry-After, 5xx, slow replies) come from `tests.adapters.fakes`.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.adapters.fakes import Wire, record

MEM0_KEY = "m0-contract-test-key"
ENTITIES = ("user_id", "agent_id", "app_id", "run_id")
ROLES = ("user", "assistant", "system")
MAX_PAGE = 200
STOP = frozenset(
    "a an and are at be by for from has have in is it of on or the to was what who".split()
)


class Refused(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body


def bad_request(message: str) -> Refused:
    return Refused(400, {"error": "400 Bad Request", "details": {"message": message}})


def terms(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP}


def stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")


@dataclass
class Event:
    id: str
    kind: str  # ADD or DELETE
    payload: dict[str, Any]
    created: float
    due: float
    status: str = "PENDING"
    results: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def view(self) -> dict[str, Any]:
        done = self.status in ("SUCCEEDED", "FAILED")
        return {
            "id": self.id,
            "event_type": self.kind,
            "status": self.status,
            "payload": self.payload,
            "metadata": None,
            "results": self.results,
            "created_at": stamp(self.created),
            "updated_at": stamp(self.due if done else self.created),
            "started_at": stamp(self.created),
            "completed_at": stamp(self.due) if done else None,
            "latency": round((self.due - self.created) * 1000, 1) if done else None,
            "error": self.error,
        }


@dataclass
class FakeMem0:
    wire: Wire = field(default_factory=Wire)
    delay: float = 0.05  # seconds a queued add or delete takes
    sync_verbatim: bool = True  # infer=false answered with results, as the OpenAPI says
    fail_next_adds: int = 0  # the next queued adds end FAILED, as a broken pipeline would
    memories: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: dict[str, Event] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    # ---- state ------------------------------------------------------------------------

    def advance(self) -> None:
        """Finish every queued event whose time has come, in the order they were queued."""
        now = time.monotonic()
        with self.lock:
            for event in self.events.values():
                if event.status == "PENDING" and event.due <= now:
                    self._finish(event)

    def _finish(self, event: Event) -> None:
        if event.kind == "DELETE":
            for memory_id in [m["id"] for m in self._matching(event.payload)]:
                del self.memories[memory_id]
            event.status = "SUCCEEDED"
            return
        if self.fail_next_adds:
            self.fail_next_adds -= 1
            event.status, event.error = "FAILED", "extraction failed"
            return
        event.results = self._store(event.payload)
        event.status = "SUCCEEDED"

    def _store(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        at = float(body["timestamp"]) if body.get("timestamp") is not None else time.time()
        out = []
        for message in body["messages"]:
            memory = {
                "id": str(uuid.uuid4()),
                "memory": message["content"],
                **{e: body.get(e) for e in ENTITIES},
                "metadata": body.get("metadata"),
                "categories": [],
                "created": at,
            }
            self.memories[memory["id"]] = memory
            out.append({"id": memory["id"], "data": {"memory": memory["memory"]}, "event": "ADD"})
        return out

    def _matching(self, scope: dict[str, Any]) -> list[dict[str, Any]]:
        wanted = {k: v for k, v in scope.items() if k in ENTITIES}
        return [
            m
            for m in self.memories.values()
            if all((v == "*" and m.get(k) is not None) or m.get(k) == v for k, v in wanted.items())
        ]

    def queue(self, kind: str, payload: dict[str, Any]) -> Event:
        now = time.monotonic()
        event = Event(str(uuid.uuid4()), kind, payload, now, now + self.delay)
        with self.lock:
            self.events[event.id] = event
        return event

    # ---- the app ----------------------------------------------------------------------

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.exception_handler(Refused)
        async def refused(_request: Request, exc: Refused) -> JSONResponse:
            return JSONResponse(exc.body, status_code=exc.status)

        @app.middleware("http")
        async def token(request: Request, call_next: Any) -> Any:
            if request.headers.get("authorization") != f"Token {MEM0_KEY}":
                detail = "Invalid API key. You can find your API key on the dashboard."
                return JSONResponse({"detail": detail}, status_code=401)
            self.advance()
            return await call_next(request)

        record(app, self.wire)  # added last, so it is outermost: every request is logged

        @app.get("/v1/ping/")
        async def ping() -> Any:
            return {
                "status": "ok",
                "org_id": "org-fake",
                "project_id": "proj-fake",
                "user_email": "evals@example.com",
            }

        @app.post("/v3/memories/add/")
        async def add(request: Request) -> Any:
            body = await request.json()
            messages = body.get("messages")
            if not isinstance(messages, list) or not messages:
                raise bad_request("`messages` must be a non-empty list")
            for message in messages:
                if message.get("role") not in ROLES or not isinstance(message.get("content"), str):
                    raise bad_request("each message needs a role and a content string")
            if not any(body.get(e) for e in ENTITIES):
                raise bad_request("at least one of user_id, agent_id, app_id or run_id is required")
            if body.get("infer") is False and self.sync_verbatim:
                with self.lock:
                    results = self._store(body)
                return {"message": "Memories stored", "status": "SUCCEEDED", "results": results}
            event = self.queue("ADD", body)
            return {
                "message": "Memory processing has been queued for background execution",
                "status": "PENDING",
                "event_id": event.id,
            }

        @app.get("/v1/event/{event_id}/")
        async def event(event_id: str) -> Any:
            found = self.events.get(event_id)
            if found is None:
                message = "Event not found or you don't have permission to access it."
                return JSONResponse({"error": message}, status_code=404)
            return found.view()

        @app.post("/v3/memories/search/")
        async def search(request: Request) -> Any:
            body = await request.json()
            filters = scoped(body)
            query = body.get("query")
            if not isinstance(query, str) or not query.strip():
                raise bad_request("`query` must be a non-empty string")
            asked = terms(query)
            threshold = float(body.get("threshold", 0.1))
            top_k = int(body.get("top_k", 10))
            found = []
            for memory in self._select(filters):
                score = len(asked & terms(memory["memory"])) / max(1, len(asked))
                if score >= threshold:
                    found.append((score, memory))
            found.sort(key=lambda pair: -pair[0])
            return {"results": [shown(m, score, "run_id") for score, m in found[:top_k]]}

        @app.post("/v3/memories/")
        async def listing(request: Request) -> Any:
            body = await request.json()
            filters = scoped(body)
            page = int(request.query_params.get("page", body.get("page", 1)))
            size = int(request.query_params.get("page_size", body.get("page_size", 100)))
            if page < 1 or not 1 <= size <= MAX_PAGE:
                raise bad_request(f"page must be >= 1 and page_size between 1 and {MAX_PAGE}")
            everything = sorted(self._select(filters), key=lambda m: m["created"])
            start = (page - 1) * size
            if start and start >= len(everything):
                return JSONResponse({"detail": "Invalid page."}, status_code=404)
            base = str(request.base_url).rstrip("/")
            more = start + size < len(everything)
            return {
                "count": len(everything),
                "next": f"{base}/v3/memories/?page={page + 1}&page_size={size}" if more else None,
                "previous": f"{base}/v3/memories/?page={page - 1}&page_size={size}"
                if page > 1
                else None,
                "results": [shown(m, None, "session_id") for m in everything[start : start + size]],
            }

        @app.get("/v1/memories/{memory_id}/")
        async def one(memory_id: str) -> Any:
            memory = self.memories.get(memory_id)
            if memory is None:
                return JSONResponse({"detail": "Memory not found."}, status_code=404)
            return shown(memory, None, "run_id")

        @app.delete("/v1/memories/{memory_id}/")
        async def delete_one(memory_id: str) -> Any:
            with self.lock:
                if self.memories.pop(memory_id, None) is None:
                    return JSONResponse({"detail": "Memory not found."}, status_code=404)
            return {"message": "Memory deleted successfully!"}

        @app.delete("/v1/memories/")
        async def delete_all(request: Request) -> Any:
            scope = {e: request.query_params[e] for e in ENTITIES if request.query_params.get(e)}
            if not scope:
                raise bad_request("at least one filter is required to delete memories")
            event = self.queue("DELETE", scope)
            return {"message": "Delete in progress. This may take some time.", "event_id": event.id}

        return app

    def _select(self, filters: dict[str, Any]) -> list[dict[str, Any]]:
        with self.lock:
            return [m for m in self.memories.values() if matches(m, filters)]


def scoped(body: dict[str, Any]) -> dict[str, Any]:
    """The v3 reads' `filters`, refused the way the API documents."""
    top = [e for e in ENTITIES if e in body]
    if top:
        raise bad_request(f"{', '.join(top)} must be passed inside `filters`, not at the top level")
    filters = body.get("filters")
    if not isinstance(filters, dict) or not filters:
        raise bad_request("`filters` is required and must name an entity")
    if not positive(filters):
        raise bad_request("`filters` must scope to at least one entity id")
    return filters


def positive(filters: dict[str, Any]) -> bool:
    """Whether an entity id is asked for outside any NOT."""
    for key, value in filters.items():
        if key in ("AND", "OR") and any(positive(f) for f in value):
            return True
        if key in ENTITIES:
            return True
    return False


def matches(memory: dict[str, Any], filters: dict[str, Any]) -> bool:
    for key, value in filters.items():
        if key == "AND":
            ok = all(matches(memory, f) for f in value)
        elif key == "OR":
            ok = any(matches(memory, f) for f in value)
        elif key == "NOT":
            ok = not any(matches(memory, f) for f in value)
        elif key == "metadata":
            held = memory.get("metadata") or {}
            ok = all(compare(held.get(k), v) for k, v in value.items())
        else:
            have = memory.get("created") if key == "created_at" else memory.get(key)
            ok = compare(have, value, dated=key == "created_at")
        if not ok:
            return False
    return True


OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda have, want: have == want,
    "ne": lambda have, want: have != want,
    "in": lambda have, want: have in want,
    "gt": lambda have, want: have is not None and have > want,
    "gte": lambda have, want: have is not None and have >= want,
    "lt": lambda have, want: have is not None and have < want,
    "lte": lambda have, want: have is not None and have <= want,
    "contains": lambda have, want: have is not None and str(want) in str(have),
    "icontains": lambda have, want: have is not None and str(want).lower() in str(have).lower(),
}


def compare(have: Any, want: Any, dated: bool = False) -> bool:
    if want == "*":
        return have is not None
    if not isinstance(want, dict):
        return have == want
    for op, value in want.items():
        if op not in OPERATORS:
            raise bad_request(f"unknown filter operator `{op}`")
        target = datetime.fromisoformat(value).timestamp() if dated else value
        if not OPERATORS[op](have, target):
            return False
    return True


def shown(memory: dict[str, Any], score: float | None, run_name: str) -> dict[str, Any]:
    out = {
        "id": memory["id"],
        "memory": memory["memory"],
        "user_id": memory["user_id"],
        "agent_id": memory["agent_id"],
        "app_id": memory["app_id"],
        run_name: memory["run_id"],
        "metadata": memory["metadata"],
        "categories": memory["categories"],
        "expiration_date": None,
        "created_at": stamp(memory["created"]),
        "updated_at": stamp(memory["created"]),
    }
    if score is not None:
        out["score"] = round(score, 4)
    return out
