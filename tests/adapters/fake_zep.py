"""A fake of Zep's v4 API, written from its official SDK (`zep-cloud` 4.0.1) and its v4 API
reference, never from memeval's adapter. Every wire fact it serves, and its source, is in
SOURCES_hosted.md.

In short: everything lives under `/api/v4` and takes `Authorization: Api-Key <key>`; users,
threads, messages, episodes and tasks are addressed by server-assigned UUIDs (`uuid`), a user
may also carry an external `user_id`, unique in the project, found again through
`POST /users/lookup`; a user owns one graph (`graph_uuid`), which graph routes also reach by the
user's UUID. Messages are added to a thread, episodes to a graph; both answer 202 with a `task`
that goes pending -> succeeded (or failed), read from `GET /tasks/{uuid}`. Graph search is paged
(`page_size`, `next_cursor`); deleting a user answers 202 with a task, and takes the user's
threads, messages and graph with it. Errors are `{"error": {"code", "message", ...}}`. Every
mutating SDK call sends an `Idempotency-Key`.

What no source fixes, and is this fake's choice (marked "guess" in the table): a repeated
`Idempotency-Key` replays the first answer when the body is the same and answers 409 when it is
not; processing takes `delay` seconds; no model runs, so each message or episode yields one
episodic edge whose fact is its text; relevance is word overlap; a deleted user is gone at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.adapters.fakes import Wire, record

ZEP_KEY = "zep-contract-test-key"
ROLES = ("system", "assistant", "user", "function", "tool")
MAX_MESSAGES = 30
MAX_METADATA_KEYS = 10
STOP = frozenset("a an and are at be by for from has in is it of on or the to was what who".split())


def terms(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP}


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def error(status: int, code: str, message: str) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "request_id": uuid.uuid4().hex}}
    return JSONResponse(body, status_code=status)


@dataclass
class Task:
    uuid: str
    type: str
    due: float
    episodes: list[dict[str, Any]] = field(default_factory=list)  # to store when it succeeds
    status: str = "pending"
    created: str = field(default_factory=now)

    def view(self) -> dict[str, Any]:
        done = self.status in ("succeeded", "failed")
        out: dict[str, Any] = {
            "uuid": self.uuid,
            "type": self.type,
            "status": self.status,
            "created_at": self.created,
            "updated_at": now(),
            "completed_at": now() if done else None,
        }
        if self.status == "succeeded":
            out["result"] = {"episodes": [{"episode_uuid": e["uuid"]} for e in self.episodes]}
        if self.status == "failed":
            out["error"] = {"code": "extraction_failed", "message": "graph extraction failed"}
        return out


@dataclass
class FakeZep:
    wire: Wire = field(default_factory=Wire)
    delay: float = 0.05  # seconds a task takes
    fail_next: int = 0  # the next tasks end failed
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    threads: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    episodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: dict[str, dict[str, Any]] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)
    answered: dict[str, tuple[str, int, Any]] = field(default_factory=dict)  # key -> first answer
    lock: threading.Lock = field(default_factory=threading.Lock)

    # ---- state ------------------------------------------------------------------------

    def advance(self) -> None:
        moment = time.monotonic()
        with self.lock:
            for task in self.tasks.values():
                if task.status == "pending" and task.due <= moment:
                    if self.fail_next:
                        self.fail_next -= 1
                        task.status = "failed"
                        continue
                    for episode in task.episodes:
                        self._extract(episode)
                    task.status = "succeeded"

    def _extract(self, episode: dict[str, Any]) -> None:
        if episode["graph_uuid"] not in {u["graph_uuid"] for u in self.users.values()}:
            return  # its user was deleted while it was queued
        episode["processed"] = True
        self.episodes[episode["uuid"]] = episode
        if episode.get("thread_uuid"):
            for message in self.messages.values():
                if message["uuid"] == episode["message_uuid"]:
                    message["processed"] = True
        edge = {
            "uuid": str(uuid.uuid4()),
            "fact": episode["content"],
            "name": "MENTIONS",
            "scope": "episodic",
            "graph_uuid": episode["graph_uuid"],
            "user_uuid": episode["user_uuid"],
            "episode_uuids": [episode["uuid"]],
            "created_at": now(),
            "valid_at": episode["reference_time"],
        }
        self.edges[edge["uuid"]] = edge

    def _queue(self, kind: str, episodes: list[dict[str, Any]]) -> Task:
        task = Task(str(uuid.uuid4()), kind, time.monotonic() + self.delay, episodes)
        self.tasks[task.uuid] = task
        return task

    def graph_owner(self, graph: str) -> dict[str, Any] | None:
        for user in self.users.values():
            if graph in (user["uuid"], user["graph_uuid"]):
                return user
        return None

    # ---- the app ----------------------------------------------------------------------

    def app(self) -> FastAPI:
        app = FastAPI()
        api = APIRouter(prefix="/api/v4")

        @app.middleware("http")
        async def idempotent(request: Request, call_next: Any) -> Any:
            key = request.headers.get("idempotency-key")
            if key is None or request.method == "GET":
                return await call_next(request)
            body = (await request.body()).decode()
            first = self.answered.get(key)
            if first is not None:
                if first[0] != f"{request.url.path} {body}":
                    return error(409, "idempotency_conflict", "key reused with another request")
                return JSONResponse(first[2], status_code=first[1])
            response = await call_next(request)
            chunks = [chunk async for chunk in response.body_iterator]
            content = b"".join(chunks)
            if 200 <= response.status_code < 300:
                answer = json.loads(content) if content else None
                self.answered[key] = (f"{request.url.path} {body}", response.status_code, answer)
            return Response(content, response.status_code, headers=dict(response.headers))

        @app.middleware("http")
        async def api_key(request: Request, call_next: Any) -> Any:
            if request.headers.get("authorization") != f"Api-Key {ZEP_KEY}":
                return error(401, "unauthorized", "invalid API key")
            self.advance()
            return await call_next(request)

        record(app, self.wire)  # added last, so outermost: every request is logged

        @api.get("/project")
        async def project() -> Any:
            return {"uuid": "proj-fake", "name": "memeval-contract", "created_at": now()}

        @api.post("/users", status_code=201)
        async def create_user(request: Request) -> Any:
            body = await request.json()
            with self.lock:
                external = body.get("user_id")
                if external and any(u["user_id"] == external for u in self.users.values()):
                    return error(409, "conflict", f"user_id {external} already exists")
                user = {
                    "uuid": str(uuid.uuid4()),
                    "graph_uuid": str(uuid.uuid4()),
                    "user_id": external,
                    "metadata": body.get("metadata"),
                    "first_name": body.get("first_name"),
                    "created_at": now(),
                }
                self.users[user["uuid"]] = user
            return user

        @api.post("/users/lookup")
        async def lookup_user(request: Request) -> Any:
            body = await request.json()
            for user in self.users.values():
                if body.get("user_id") and user["user_id"] == body["user_id"]:
                    return user
            return error(404, "not_found", "user not found")

        @api.delete("/users/{user_uuid}", status_code=202)
        async def delete_user(user_uuid: str) -> Any:
            with self.lock:
                user = self.users.pop(user_uuid, None)
                if user is None:
                    return error(404, "not_found", "user not found")
                gone = {t for t, th in self.threads.items() if th["user_uuid"] == user_uuid}
                for table in (self.episodes, self.edges):
                    for key in [k for k, v in table.items() if v["user_uuid"] == user_uuid]:
                        del table[key]
                for key in [k for k, m in self.messages.items() if m["thread_uuid"] in gone]:
                    del self.messages[key]
                for thread in gone:
                    del self.threads[thread]
                task = self._queue("delete_user", [])
            return {"task": task.view()}

        @api.post("/threads", status_code=201)
        async def create_thread(request: Request) -> Any:
            body = await request.json()
            user = self.users.get(body.get("user_uuid", ""))
            if user is None:
                return error(404, "not_found", "user not found")
            thread = {
                "uuid": str(uuid.uuid4()),
                "user_uuid": user["uuid"],
                "graph_uuid": user["graph_uuid"],
                "thread_id": None,
                "created_at": now(),
                "updated_at": now(),
            }
            self.threads[thread["uuid"]] = thread
            return thread

        @api.post("/threads/{thread_uuid}/messages", status_code=202)
        async def add_messages(thread_uuid: str, request: Request) -> Any:
            thread = self.threads.get(thread_uuid)
            if thread is None:
                return error(404, "not_found", "thread not found")
            body = await request.json()
            messages = body.get("messages")
            if not isinstance(messages, list) or not 1 <= len(messages) <= MAX_MESSAGES:
                return error(400, "invalid", f"messages must hold 1 to {MAX_MESSAGES} messages")
            for message in messages:
                if message.get("role") not in ROLES or not message.get("content"):
                    return error(400, "invalid", "each message needs a role and content")
                if message.get("uuid") is not None:
                    return error(400, "invalid", "message uuid is server-assigned")
                if len(message.get("metadata") or {}) > MAX_METADATA_KEYS:
                    return error(400, "invalid", "metadata holds at most 10 keys")
            stored, episodes = [], []
            with self.lock:
                for message in messages:
                    at = message.get("reference_time") or now()
                    row = {
                        "uuid": str(uuid.uuid4()),
                        "thread_uuid": thread_uuid,
                        "content": message["content"],
                        "role": message["role"],
                        "name": message.get("name"),
                        "metadata": message.get("metadata"),
                        "reference_time": at,
                        "created_at": now(),
                        "processed": False,
                    }
                    self.messages[row["uuid"]] = row
                    stored.append(row)
                    episodes.append(
                        {
                            "uuid": str(uuid.uuid4()),
                            "message_uuid": row["uuid"],
                            "content": row["content"],
                            "source": "message",
                            "role": row["role"],
                            "role_name": row["name"],
                            "metadata": row["metadata"],
                            "thread_uuid": thread_uuid,
                            "graph_uuid": thread["graph_uuid"],
                            "user_uuid": thread["user_uuid"],
                            "reference_time": at,
                            "created_at": now(),
                            "processed": False,
                        }
                    )
                task = self._queue("add_messages", episodes)
            out: dict[str, Any] = {"messages": stored, "task": task.view()}
            if body.get("return_context"):
                out["context"] = ""
            return out

        @api.get("/threads/{thread_uuid}/messages/{message_uuid}")
        async def get_message(thread_uuid: str, message_uuid: str) -> Any:
            message = self.messages.get(message_uuid)
            if message is None or message["thread_uuid"] != thread_uuid:
                return error(404, "not_found", "message not found")
            return message

        @api.post("/graphs/{graph_uuid}/episodes", status_code=202)
        async def add_episode(graph_uuid: str, request: Request) -> Any:
            user = self.graph_owner(graph_uuid)
            if user is None:
                return error(404, "not_found", "graph not found")
            body = await request.json()
            if not isinstance(body.get("data"), str) or not body["data"].strip():
                return error(400, "invalid", "data must be a non-empty string")
            if len(body.get("metadata") or {}) > MAX_METADATA_KEYS:
                return error(400, "invalid", "metadata holds at most 10 keys")
            episode = {
                "uuid": str(uuid.uuid4()),
                "content": body["data"],
                "source": body.get("type") or "text",
                "source_description": body.get("source_description"),
                "metadata": body.get("metadata"),
                "graph_uuid": user["graph_uuid"],
                "user_uuid": user["uuid"],
                "reference_time": body.get("reference_time") or now(),
                "created_at": now(),
                "processed": False,
            }
            with self.lock:
                task = self._queue("add_episode", [episode])
            return {"episode": episode, "task": task.view()}

        @api.get("/tasks/{task_uuid}")
        async def get_task(task_uuid: str) -> Any:
            task = self.tasks.get(task_uuid)
            return error(404, "not_found", "task not found") if task is None else task.view()

        @api.post("/graphs/{graph_uuid}/search/edges")
        async def search_edges(graph_uuid: str, request: Request) -> Any:
            return await self._search(graph_uuid, request, self.edges, "fact")

        @api.post("/graphs/{graph_uuid}/search/episodes")
        async def search_episodes(graph_uuid: str, request: Request) -> Any:
            return await self._search(graph_uuid, request, self.episodes, "content")

        app.include_router(api)
        return app

    async def _search(
        self, graph: str, request: Request, table: dict[str, dict[str, Any]], text: str
    ) -> Any:
        user = self.graph_owner(graph)
        if user is None:
            return error(404, "not_found", "graph not found")
        body = await request.json()
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            return error(400, "invalid", "query must be a non-empty string")
        size = int(request.query_params.get("page_size", 10))
        asked = terms(query)
        scored = []
        for row in list(table.values()):
            if row["graph_uuid"] != user["graph_uuid"]:
                continue
            score = len(asked & terms(row[text])) / max(1, len(asked))
            if score > 0:
                scored.append({**row, "score": round(score, 4)})
        scored.sort(key=lambda r: -r["score"])
        items = [{k: v for k, v in r.items() if k != "message_uuid"} for r in scored[:size]]
        return {"items": items, "next_cursor": None, "total_size": len(items)}
