"""A CortexDB on 127.0.0.1, written from CortexDB's own SDK and TinyMemory's measured doubles.

Sources: the request builders and readers of `cortexdbai` 0.12 (`cortexdb/v1/client.py`,
`exceptions.py`) for the shapes, and TinyMemory's loopback doubles (`cortex/testing/log.rs`,
`routes.rs`) and wire notes for what a live CortexDB 0.10 does with them. Deliberately
unaccommodating, because a tidy double proves nothing:

- every body is a closed schema: an unknown field, at any depth, is `422 INVALID_BODY`;
- a write is accepted (202) before it is readable: the listing and recall see it only after
  `lag` listings of its scope, unless it was written with `?wait=indexed` or later;
- the body `idempotency_key` replays the same write and refuses another body under it
  (`409 IDEMPOTENCY_CONFLICT`); a scope-wide forget keeps the keys, a forget by id releases
  them;
- the listing is newest first and emits every event twice, `limit` counting the copies;
- forget needs a `memory_ids` selector or `confirm_all`, never both;
- scope segments must be `type:id` of a registered type (`422 UNREGISTERED_SCOPE_TYPE`);
- every call but `whoami` and `version` needs `X-Cortex-Actor` naming the key's caller;
- errors are `{error_code, message, request_id, retriable}`;
- every stored event queues one enrichment job and bills one model call; `v1/admin/usage`
  reports the running totals and the backlog, which drains at once or, with `drain_per_read`,
  that many jobs per usage read. A drained job leaves a fact a belief build can use.

`CortexLog` is the store; `FakeCortex` serves it on the `/v1/*` routes. TinyHumans' hosted
`/memory/*` surface over the same log is `tests/adapters/fake_tinyhumans.py`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tests.adapters.fakes import Wire, record

KEY = "cortex-test-key-123"
CALLER = "user:local"
WORD = re.compile(r"[a-z0-9]+")
SCOPE_TYPES = frozenset(
    "org dept team app user agent service ws project global system source".split()
)
WAITS = frozenset({"accepted", "captured", "indexed", "consolidated", "settled"})
LAYERS = Literal["events", "facts", "beliefs", "episodes", "understanding"]
M = TypeVar("M", bound=BaseModel)
PRICE_USD = 0.0001  # what one stored event costs in model calls
HISTORY_CALLS = 100  # calls the account made before any test


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


class Refused(Exception):
    """A CortexDB error answer."""

    def __init__(
        self, status: int, code: str, message: str = "", details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{status} {code}")
        self.status, self.code, self.message = status, code, message or code.lower()
        self.details = details


# ---- the closed request schemas, as the SDK builds them ----------------------------------


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageContent(Closed):
    kind: Literal["message"]
    role: Literal["user", "assistant", "tool", "system"]
    text: str


class TextContent(Closed):
    kind: Literal["text"]
    text: str


class JsonContent(Closed):
    kind: Literal["json"]
    data: Any


class BlobContent(Closed):
    kind: Literal["blob_ref"]
    blob_id: str
    transcript: str | None = None


class TripleContent(Closed):
    kind: Literal["triple"]
    triple: dict[str, Any]


Content = Annotated[
    MessageContent | TextContent | JsonContent | BlobContent | TripleContent,
    Field(discriminator="kind"),
]


class ContextIn(Closed):
    observed_at: datetime | None = None
    labels: list[str] = Field(default_factory=list)
    timezone: str | None = None
    refers_to: list[dict[str, Any]] | None = None


class EnvelopeIn(Closed):
    scope: str
    modality: str = Field(min_length=1, max_length=128)
    content: Content
    context: ContextIn = Field(default_factory=ContextIn)
    idempotency_key: str = Field(min_length=1, max_length=64)
    observed_actor: dict[str, str] | None = None
    subject: dict[str, str] | None = None
    source: dict[str, Any] | None = None
    language: str | None = None
    scripts: list[str] | None = None


class BulkIn(Closed):
    items: list[EnvelopeIn] = Field(min_length=1, max_length=1000)
    ordering: Literal["strict_temporal"] | None = None


class BudgetsIn(Closed):
    max_tokens: int | None = None
    per_layer_limits: dict[LAYERS, int] = Field(default_factory=dict)


class MetadataIn(Closed):
    labels: str | list[str] | None = None
    intent: str | list[str] | None = None
    modality: str | list[str] | None = None
    caller: str | list[str] | None = None
    observed_actor: str | list[str] | None = None


class FiltersIn(Closed):
    metadata: MetadataIn


class TemporalIn(Closed):
    natural: str | None = None
    natural_mode: Literal["strict", "lenient"] | None = None
    timezone: str | None = None
    valid_during: str | None = None
    refers_during: dict[str, str] | None = None


class RecallIn(Closed):
    scope: str
    query: str | None = None
    view: Literal["holistic", "local", "descend", "lineage", "granular"] = "holistic"
    include: list[str] | None = None
    diagnostics: Literal["none", "summary", "full"] = "none"
    budgets: BudgetsIn | None = None
    filters: FiltersIn | None = None
    temporal: TemporalIn | None = None


class SelectorIn(Closed):
    memory_ids: list[str] | None = Field(default=None, max_length=100)
    about_subject: str | None = None
    about_entity: str | None = None
    predicate: str | None = None


class ForgetIn(Closed):
    scope: str
    cascade: Literal["derived_only", "all", "none"] = "derived_only"
    confirm_all: bool = False
    layers: list[str] | None = None
    selector: SelectorIn | None = None
    reason: str | None = None
    from_preview_id: str | None = None


class BuildIn(Closed):
    scope: str = Field(min_length=1)


def closed(model: type[M], body: Any) -> M:
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise Refused(422, "INVALID_BODY", f"{where}: {first['msg']}") from None


# ---- the log ------------------------------------------------------------------------------


@dataclass
class Stored:
    event: dict[str, Any]
    hidden: int  # listings of its scope before it is readable
    enriched: bool = False


@dataclass
class CortexLog:
    lag: int = 1
    drain_per_read: int | None = None  # None: enrichment is immediate
    events: list[Stored] = field(default_factory=list)  # oldest first
    keys: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (identity, id)
    facts: list[dict[str, Any]] = field(default_factory=list)
    beliefs: list[dict[str, Any]] = field(default_factory=list)
    builds: list[str] = field(default_factory=list)
    forgets: list[dict[str, Any]] = field(default_factory=list)
    queued_total: int = 0
    billed_events: int = 0
    ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    @staticmethod
    def check_scope(scope: str) -> None:
        for segment in scope.split("/"):
            kind, colon, ident = segment.partition(":")
            if not (colon and kind and ident):
                raise Refused(422, "INVALID_SCOPE", f"`{segment}` is not type:id")
            if kind not in SCOPE_TYPES:
                raise Refused(422, "UNREGISTERED_SCOPE_TYPE", f"`{kind}` is not registered")

    def in_scope(self, scope: str, *, descend: bool = False) -> list[Stored]:
        return [
            s
            for s in self.events
            if s.event["scope"] == scope or (descend and s.event["scope"].startswith(scope + "/"))
        ]

    # writes

    def append(self, body: Any, wait: str | None) -> dict[str, Any]:
        if wait is not None and wait not in WAITS:
            raise Refused(422, "INVALID_QUERY", f"wait must be one of {sorted(WAITS)}")
        envelope = closed(EnvelopeIn, body)
        self.check_scope(envelope.scope)
        identity = body_identity(body)
        held = self.keys.get(envelope.idempotency_key)
        if held is not None:
            if held[0] != identity:
                raise Refused(409, "IDEMPOTENCY_CONFLICT", "the key holds another body")
            return {"event_id": held[1], "status": "captured", "replayed_from_idempotency": True}
        event_id = f"evt_{next(self.ids)}"
        self.keys[envelope.idempotency_key] = (identity, event_id)
        context = {"labels": envelope.context.labels, "recorded_at": now()}
        context["observed_at"] = (
            iso(envelope.context.observed_at) if envelope.context.observed_at else now()
        )
        event = {
            "id": event_id,
            "scope": envelope.scope,
            "modality": envelope.modality,
            "content": envelope.content.model_dump(exclude_none=True),
            "context": context,
        }
        waited = wait in {"indexed", "consolidated", "settled"}
        self.events.append(Stored(event, hidden=0 if waited else self.lag))
        self.queued_total += 1
        self.billed_events += 1
        if self.drain_per_read is None:
            self.enrich(self.events[-1])
        return {"event_id": event_id, "status": "captured", "replayed_from_idempotency": False}

    def enrich(self, stored: Stored) -> None:
        stored.enriched = True
        text = stored.event["content"].get("text", "")
        self.facts.append(
            {
                "id": f"fact_{stored.event['id']}",
                "scope": stored.event["scope"],
                "source_event": stored.event["id"],
                "subject": {"type": "entity", "id": "ent_memory", "name": "memory"},
                "predicate": "states",
                "object": {"type": "literal", "datatype": "string", "value": text},
            }
        )

    # reads

    def page(self, params: dict[str, str]) -> dict[str, Any]:
        scope = params.get("scope", "")
        self.check_scope(scope)
        cursor = int(params.get("cursor") or 0)
        limit = int(params.get("limit") or 50)
        wanted = [x.strip() for x in params.get("labels", "").split(",") if x.strip()]
        held = self.in_scope(scope)
        stream = []
        for stored in reversed(held):
            if stored.hidden == 0 and labelled(stored.event, wanted):
                stream += [stored.event, stored.event]
        for stored in held:
            stored.hidden = max(0, stored.hidden - 1)
        page = stream[cursor : cursor + limit]
        after = cursor + len(page)
        return {"items": page, "has_more": after < len(stream), "next_cursor": str(after)}

    def recall(self, body: Any) -> dict[str, Any]:
        request = closed(RecallIn, body)
        self.check_scope(request.scope)
        limits = request.budgets.per_layer_limits if request.budgets else {}
        asked = {w for w in words(request.query or "") if len(w) >= 3}
        wanted: list[str] = []
        window: tuple[str, str] | None = None
        if request.filters and request.filters.metadata.labels:
            given = request.filters.metadata.labels
            wanted = [given] if isinstance(given, str) else given
        if request.temporal and request.temporal.valid_during:
            start, dots, end = request.temporal.valid_during.partition("..")
            if not dots:
                raise Refused(422, "INVALID_BODY", "valid_during is start..end")
            window = (start, end)
        pool = [
            s.event
            for s in reversed(self.in_scope(request.scope, descend=request.view == "descend"))
            if s.hidden == 0 and labelled(s.event, wanted) and within(s.event, window)
        ]
        ranked = sorted(pool, key=lambda e: -len(asked & words(e["content"].get("text", ""))))
        events = [e for e in ranked if not asked or asked & words(e["content"].get("text", ""))]
        events = events[: limits.get("events", 30)]

        def matching(rows: list[dict[str, Any]], layer: str) -> list[dict[str, Any]]:
            mine = [r for r in reversed(rows) if r["scope"] == request.scope]
            hits = [r for r in mine if not asked or asked & words(json.dumps(r))]
            return hits[: limits.get(layer, 0)]

        block = "\n".join(
            f"[{e['content'].get('role', 'user')}] {e['content'].get('text', '')}" for e in events
        )
        return {
            "pack_id": f"pack_{next(self.ids)}",
            "layers": {
                "events": events,
                "facts": matching(self.facts, "facts"),
                "beliefs": matching(self.beliefs, "beliefs"),
            },
            "context_block": block,
        }

    # forget and derivation

    def forget(self, body: Any) -> dict[str, Any]:
        request = closed(ForgetIn, body)
        self.check_scope(request.scope)
        ids = (request.selector.memory_ids or []) if request.selector else []
        if ids and request.confirm_all:
            raise Refused(400, "AMBIGUOUS_SELECTOR_CONFIRM_ALL", "a selector or confirm_all")
        if not ids and not request.confirm_all:
            raise Refused(422, "EMPTY_SELECTOR_WITHOUT_CONFIRMATION", "name memory_ids")
        self.forgets.append(request.model_dump(exclude_none=True))
        scope = request.scope
        gone = {
            s.event["id"]
            for s in self.events
            if s.event["scope"] == scope and (request.confirm_all or s.event["id"] in ids)
        }
        self.events = [s for s in self.events if s.event["id"] not in gone]
        if not request.confirm_all:  # only a forget by id releases the keys
            self.keys = {k: held for k, held in self.keys.items() if held[1] not in gone}
        self.facts = [f for f in self.facts if f["source_event"] not in gone]
        self.beliefs = [b for b in self.beliefs if b["source"] not in {f"fact_{g}" for g in gone}]
        return {"deleted": {"events": len(gone)}, "requested": len(ids)}

    def build(self, body: Any) -> dict[str, Any]:
        scope = closed(BuildIn, body).scope
        self.check_scope(scope)
        self.builds.append(scope)
        believed = {b["source"] for b in self.beliefs}
        fresh = [
            {
                "id": f"belief_{fact['id']}",
                "source": fact["id"],
                "scope": scope,
                "claim": {
                    "subject": {"type": "entity", "id": "ent_user", "name": "user"},
                    "predicate": "said",
                    "object": fact["object"],
                },
                "stance": "supported",
                "confidence": 0.9,
                "valid_from": now(),
            }
            for fact in self.facts
            if fact["scope"] == scope and fact["id"] not in believed
        ]
        self.beliefs += fresh
        scanned = sum(f["scope"] == scope for f in self.facts)
        return {"built": len(fresh), "items": fresh, "facts_scanned": scanned, "reasons": {}}

    def usage(self) -> dict[str, Any]:
        waiting = [s for s in self.events if not s.enriched]
        for stored in waiting[: self.drain_per_read or 0]:
            self.enrich(stored)
        calls = HISTORY_CALLS + self.billed_events
        return {
            "total": {
                "calls": calls,
                "tokens_total": calls * 10,
                "tokens_unsplit": 0,
                "cost_usd": calls * PRICE_USD,
            },
            "enrichment_backlog": {
                "jobs_pending": sum(not s.enriched for s in self.events),
                "jobs_queued_total": self.queued_total,
            },
        }


def body_identity(body: dict[str, Any]) -> str:
    """What a key stands for: the body without the key and without the occurrence time."""
    identity = {k: v for k, v in body.items() if k != "idempotency_key"}
    identity["context"] = {
        k: v for k, v in (body.get("context") or {}).items() if k != "observed_at"
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def labelled(event: dict[str, Any], wanted: list[str]) -> bool:
    return not wanted or bool(set(event["context"].get("labels", [])) & set(wanted))


def within(event: dict[str, Any], window: tuple[str, str] | None) -> bool:
    if window is None:
        return True
    start, end = (parse_time(x) for x in window)
    return start <= parse_time(event["context"]["observed_at"]) <= end


def parse_time(text: str) -> datetime:
    at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def iso(at: datetime) -> str:
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).isoformat().replace("+00:00", "Z")


def now() -> str:
    return iso(datetime.now(UTC))


# ---- the /v1 surface ----------------------------------------------------------------------


@dataclass
class FakeCortex:
    """The variants where vendor sources disagree or a deployment differs (SOURCES.md)."""

    log: CortexLog = field(default_factory=CortexLog)
    key: str = KEY
    caller: str = CALLER
    whoami_route: bool = True  # False: a server from before the actor model
    wire: Wire = field(default_factory=Wire)
    refused: dict[str, tuple[int, str]] = field(default_factory=dict)  # path -> status, code
    token: Literal["static", "minted"] = "static"  # minted: whoami needs the actor too
    event_shape: Literal["context", "top_level"] = "context"  # how events are listed
    usage_closed: int | None = None  # 403 or 404 on v1/admin/usage
    diagnostics_enforced: bool = False  # a recall must say diagnostics "none" itself
    wait_timeout: bool = False  # ?wait=indexed answers 408 WAIT_TIMEOUT (stored, not indexed)
    build_refused: str | None = None  # the vendor code of a 402 on v1/beliefs/build

    def shaped(self, event: dict[str, Any]) -> dict[str, Any]:
        if self.event_shape == "context":
            return event
        context = event["context"]
        rest = {k: v for k, v in event.items() if k not in ("id", "context")}
        extra = {k: v for k, v in context.items() if k not in ("labels", "observed_at")}
        return {
            "event_id": event["id"],
            "labels": context.get("labels", []),
            "observed_at": context.get("observed_at"),
            **rest,
            **({"context": extra} if extra else {}),
        }

    def app(self) -> FastAPI:
        app = FastAPI()
        record(app, self.wire)

        @app.exception_handler(Refused)
        async def refused(request: Request, exc: Refused) -> JSONResponse:
            return error(exc)

        def gate(request: Request, actor: bool = True) -> None:
            if request.headers.get("authorization") != f"Bearer {self.key}":
                raise Refused(401, "INVALID_TOKEN_SIGNATURE", "the bearer is not valid here")
            if request.url.path in self.refused:
                raise Refused(*self.refused[request.url.path])
            if not self.whoami_route:
                return  # before the actor model, the header is not read
            given = request.headers.get("x-cortex-actor")
            if actor and given != self.caller:
                raise Refused(401, "ACTOR_MISMATCH", "X-Cortex-Actor must name the caller")
            if not actor and self.token == "minted" and given is None:
                raise Refused(401, "MISSING_ACTOR", "X-Cortex-Actor header is required")
            if not actor and self.token == "minted" and given != self.caller:
                raise Refused(401, "ACTOR_MISMATCH", "X-Cortex-Actor must be the token's sub")

        async def body_of(request: Request) -> Any:
            gate(request)
            try:
                return await request.json()
            except ValueError:
                raise Refused(400, "INVALID_JSON") from None

        @app.get("/v1/auth/whoami")
        async def whoami(request: Request) -> JSONResponse:
            if not self.whoami_route:
                raise Refused(404, "NOT_FOUND")
            gate(request, actor=False)
            return JSONResponse({"caller": self.caller, "tenant": "default", "preset": "dev"})

        @app.get("/v1/admin/version")
        async def version() -> JSONResponse:
            return JSONResponse({"version": "v0.10.5", "capabilities": ["temporal_lenient_v1"]})

        @app.get("/v1/admin/health")
        async def health(request: Request) -> JSONResponse:
            gate(request)
            return JSONResponse({"status": "healthy"})

        @app.post("/v1/experience")
        async def experience(request: Request) -> JSONResponse:
            body = await body_of(request)
            ack = self.log.append(body, request.query_params.get("wait"))
            return JSONResponse(ack, status_code=202)

        @app.post("/v1/experience/bulk")
        async def bulk(request: Request) -> JSONResponse:
            body = await body_of(request)
            closed(BulkIn, body)
            wait = request.query_params.get("wait")
            timed_out = self.wait_timeout and wait == "indexed"
            stored = None if timed_out else wait  # durable, but left to index in its time
            results = [
                {"index": i, **self.log.append(item, stored)}
                for i, item in enumerate(body["items"])
            ]
            if timed_out:
                raise Refused(408, "WAIT_TIMEOUT", "stored; not indexed within the wait")
            return JSONResponse({"accepted": len(results), "results": results})

        @app.get("/v1/events")
        async def events(request: Request) -> JSONResponse:
            gate(request)
            page = self.log.page(dict(request.query_params))
            return JSONResponse({**page, "items": [self.shaped(e) for e in page["items"]]})

        @app.post("/v1/recall")
        async def recall(request: Request) -> JSONResponse:
            body = await body_of(request)
            if self.diagnostics_enforced and body.get("diagnostics") != "none":
                raise Refused(
                    403,
                    "POLICY_DENIED",
                    "missing capability diagnostics.read",
                    {"capability": "diagnostics.read", "decided_by_tier": "free"},
                )
            pack = self.log.recall(body)
            layers = pack["layers"]
            layers["events"] = [self.shaped(e) for e in layers["events"]]
            return JSONResponse(pack)

        @app.post("/v1/forget")
        async def forget(request: Request) -> JSONResponse:
            return JSONResponse(self.log.forget(await body_of(request)))

        @app.post("/v1/beliefs/build")
        async def build(request: Request) -> JSONResponse:
            body = await body_of(request)
            if self.build_refused:
                raise Refused(402, self.build_refused, "not available on your tier")
            return JSONResponse(self.log.build(body))

        @app.get("/v1/beliefs")
        async def beliefs(request: Request) -> JSONResponse:
            gate(request)
            scope = request.query_params.get("scope", "")
            rows = [b for b in reversed(self.log.beliefs) if b["scope"] == scope]
            return JSONResponse({"items": rows, "has_more": False})

        @app.get("/v1/facts")
        async def facts(request: Request) -> JSONResponse:
            gate(request)
            scope = request.query_params.get("scope", "")
            return JSONResponse({"items": [f for f in self.log.facts if f["scope"] == scope]})

        @app.get("/v1/admin/usage")
        async def usage(request: Request) -> JSONResponse:
            gate(request)
            if self.usage_closed == 404:
                raise Refused(404, "NOT_FOUND", "no such route")
            if self.usage_closed:
                raise Refused(self.usage_closed, "POLICY_DENIED", "per-caller usage is closed")
            return JSONResponse(self.log.usage())

        return app


def error(exc: Refused) -> JSONResponse:
    body = {
        "error_code": exc.code,
        "message": exc.message,
        "request_id": "req_fake",
        "retriable": exc.status in (429, 503),
        **({"details": exc.details} if exc.details else {}),
    }
    return JSONResponse(body, status_code=exc.status)
