"""A fake of Supermemory's v5 API, written from its official SDK and API reference, never from
memeval's adapter. Every wire fact it serves, and where it comes from, is in SOURCES_hosted.md.

In short: `Authorization: Bearer <key>`; routes have no version prefix and scope everything by a
namespace in the path (`/ns/{namespace}/...`, v3's container tag); a document is added with an
optional caller `id`, and re-adding that id with the same content is an unchanged duplicate
(answered with the document's current status, no new work) while new content is appended and
queued; a document moves from `queued` to `done` (or `failed`) in `system.status`; search answers
memories, chunks or both (`searchMode`) with the document's metadata carried onto each; listing
is paged with `page` / `limit` into `{documents, chunks, memories, pagination}`; deleting a
namespace removes its content at once and says how much.

What no source fixes, and is this fake's choice (marked "guess" in the table): processing takes
`delay` seconds; no model runs, so a `memory` document yields one memory whose text is its
content, next to one chunk; relevance is word overlap; an unknown namespace or document answers
404 `{"error"}`; 401 bodies are `{"error", "details"}`.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.adapters.fakes import Wire, record

SUPERMEMORY_KEY = "sm-contract-test-key"
STOP = frozenset("a an and are at be by for from has in is it of on or the to was what who".split())
MODES = ("hybrid", "memories", "chunks")


def terms(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP}


def stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")


def invalid(message: str, path: str) -> JSONResponse:
    body = {"success": False, "error": [{"message": message, "path": [path]}], "data": None}
    return JSONResponse(body, status_code=400)


def missing(what: str) -> JSONResponse:
    return JSONResponse({"error": f"{what} not found"}, status_code=404)


@dataclass
class Doc:
    id: str
    parts: list[str]
    metadata: dict[str, Any]
    task: str
    created: float
    due: float
    status: str = "queued"

    @property
    def content(self) -> str:
        return "\n".join(self.parts)

    def system(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "dreamingStatus": "done" if self.status == "done" else "dreaming",
            "memoryCount": 1 if self.status == "done" and self.task == "memory" else 0,
            "createdAt": stamp(self.created),
            "updatedAt": stamp(self.due),
        }


@dataclass
class FakeSupermemory:
    wire: Wire = field(default_factory=Wire)
    delay: float = 0.05  # seconds a queued document takes to reach `done`
    fail_next: int = 0  # the next queued documents end `failed`
    spaces: dict[str, dict[str, Doc]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def advance(self) -> None:
        now = time.time()
        with self.lock:
            for docs in self.spaces.values():
                for doc in docs.values():
                    if doc.status == "queued" and doc.due <= now:
                        if self.fail_next:
                            self.fail_next -= 1
                            doc.status = "failed"
                        else:
                            doc.status = "done"

    def documents(self) -> list[Doc]:
        return [doc for docs in self.spaces.values() for doc in docs.values()]

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.middleware("http")
        async def bearer(request: Request, call_next: Any) -> Any:
            if request.headers.get("authorization") != f"Bearer {SUPERMEMORY_KEY}":
                body = {"error": "Unauthorized", "details": "Invalid or missing API key"}
                return JSONResponse(body, status_code=401)
            self.advance()
            return await call_next(request)

        record(app, self.wire)

        @app.get("/organization")
        async def organization() -> Any:
            return {"organizationalContext": None, "namespaceCount": len(self.spaces)}

        @app.post("/ns/{namespace}/document")
        async def add(namespace: str, request: Request) -> Any:
            body = await request.json()
            content = body.get("content")
            if not isinstance(content, str) or not content.strip():
                return invalid("content must be a non-empty string", "content")
            task = body.get("taskType") or "memory"
            now = time.time()
            with self.lock:
                docs = self.spaces.setdefault(namespace, {})
                doc_id = body.get("id") or uuid.uuid4().hex
                doc = docs.get(doc_id)
                if doc is None:
                    docs[doc_id] = doc = Doc(
                        doc_id, [content], dict(body.get("metadata") or {}), task, now, now
                    )
                elif content in doc.parts:  # an unchanged duplicate: no new work
                    return {"id": doc.id, "status": doc.status}
                else:  # the same id with new information: appended and processed again
                    doc.parts.append(content)
                    doc.metadata.update(body.get("metadata") or {})
                doc.status, doc.due = "queued", now + self.delay
            return {"id": doc.id, "status": "queued"}

        @app.get("/ns/{namespace}/document/{doc_id}")
        async def get(namespace: str, doc_id: str) -> Any:
            doc = self.spaces.get(namespace, {}).get(doc_id)
            if doc is None:
                return missing("Document")
            return {
                "id": doc.id,
                "title": None,
                "type": "text",
                "summary": None,
                "content": doc.content,
                "metadata": doc.metadata,
                "system": doc.system(),
            }

        @app.post("/ns/{namespace}/search")
        async def search(namespace: str, request: Request) -> Any:
            began = time.perf_counter()
            body = await request.json()
            query = body.get("query")
            if not isinstance(query, str) or not query.strip():
                return invalid("query must be a non-empty string", "query")
            mode = body.get("searchMode") or "hybrid"
            if mode not in MODES:
                return invalid(f"searchMode must be one of {', '.join(MODES)}", "searchMode")
            limit = int(body.get("limit") or 10)
            threshold = float(body.get("threshold") or 0.0)
            with_docs = bool((body.get("include") or {}).get("documents"))
            asked = terms(query)
            found = []
            for doc in list(self.spaces.get(namespace, {}).values()):
                if doc.status != "done":
                    continue
                score = len(asked & terms(doc.content)) / max(1, len(asked))
                if score <= 0 or score < threshold:
                    continue
                if mode in ("hybrid", "memories") and doc.task == "memory":
                    found.append((score, self._result(doc, "memory", score, with_docs)))
                if mode in ("hybrid", "chunks"):
                    found.append((score * 0.9, self._result(doc, "chunk", score * 0.9, with_docs)))
            found.sort(key=lambda pair: -pair[0])
            return {
                "results": [r for _, r in found[:limit]],
                "searchTime": round((time.perf_counter() - began) * 1000, 3),
            }

        @app.post("/ns/{namespace}/list/{kind}")
        async def listing(namespace: str, kind: str, request: Request) -> Any:
            if kind not in ("documents", "chunks", "memories"):
                return invalid("type must be documents, chunks or memories", "type")
            page = int(request.query_params.get("page", 1))
            limit = int(request.query_params.get("limit", 10))
            if page < 1 or not 1 <= limit <= 100:
                return invalid("page must be >= 1 and limit between 1 and 100", "limit")
            docs = sorted(self.spaces.get(namespace, {}).values(), key=lambda d: d.created)
            shown = docs[(page - 1) * limit : page * limit]
            out: dict[str, Any] = {"documents": [], "chunks": [], "memories": []}
            if kind == "documents":
                out["documents"] = [
                    {
                        "id": d.id,
                        "title": None,
                        "type": "text",
                        "metadata": d.metadata,
                        "system": d.system(),
                    }
                    for d in shown
                ]
            out["pagination"] = {
                "currentPage": page,
                "limit": limit,
                "totalItems": len(docs),
                "totalPages": -(-len(docs) // limit),
            }
            return out

        @app.delete("/ns/{namespace}")
        async def delete(namespace: str) -> Any:
            with self.lock:
                docs = self.spaces.pop(namespace, None)
            if docs is None:
                return missing("Namespace")
            return {
                "status": "deleted",
                "namespace": namespace,
                "deletedDocumentsCount": len(docs),
                "deletedMemoriesCount": sum(d.task == "memory" for d in docs.values()),
            }

        return app

    @staticmethod
    def _result(doc: Doc, kind: str, score: float, with_docs: bool) -> dict[str, Any]:
        result: dict[str, Any] = {
            "id": f"{kind}-{doc.id}",
            "memory": doc.content if kind == "memory" else None,
            "chunk": doc.content if kind == "chunk" else None,
            "metadata": doc.metadata,
            "similarity": round(score, 4),
            "isLatest": True,
            "isInference": False,
            "system": {"createdAt": stamp(doc.created), "updatedAt": stamp(doc.due)},
        }
        if with_docs:
            result["included"] = {
                "document": {
                    "id": doc.id,
                    "title": None,
                    "type": "text",
                    "metadata": doc.metadata,
                    "summary": None,
                    "system": {"createdAt": stamp(doc.created), "updatedAt": stamp(doc.due)},
                }
            }
        return result
