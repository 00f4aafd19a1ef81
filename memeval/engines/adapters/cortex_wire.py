"""CortexDB's v1 wire as memeval speaks it, field by field.

Sources: the request builders of CortexDB's own SDK (`cortexdbai` 0.12, `cortexdb/v1/client.py`:
`_envelope`, `recall`, `events`, `_forget_body`, `build_beliefs`) and TinyMemory's wire notes and
loopback doubles (`docs/architecture/cortex-wire.md`, `cortex/testing/{routes,log}.rs`), which
record what a live CortexDB 0.10 answers. Both surfaces (`/v1/*` and TinyHumans' `/memory/*`)
take the same bodies.

- A write is one closed `ExperienceEnvelope`: `scope`, `modality`, `content` (kind `message`:
  `role`, `text`), `context` (`observed_at`, `labels`) and a body `idempotency_key` of at most
  64 characters. An unknown field anywhere is a 422, so requests here forbid extras.
- The receipt is `{event_id, status, replayed_from_idempotency}` (202). The same key with the
  same body replays the first event; the key outlives a scope-wide forget but is released by a
  forget of the event's own id.
- `GET v1/events` pages `{items, has_more, next_cursor}`, newest first, every event listed twice
  (`limit` counts the copies).
- `POST v1/recall` takes only `scope`, `query`, `view`, `include`, `diagnostics`, `budgets`,
  `temporal` and `filters`, and answers a stratified pack `{pack_id, layers, context_block}`.
  `diagnostics` is always sent as `"none"`, as the SDK and the CLI send it: any other value
  (and, on a server that enforces it, none at all) needs the `diagnostics.read` capability,
  which free-tier tokens lack.
- An event comes in two shapes: the API reference lists `event_id` with top-level `labels`
  and `observed_at`; TinyMemory's measured doubles and `cortexdb-mcp` (which reads either)
  show `id` with `context.labels`. Both are read, wherever an event is.
- `POST v1/forget` needs a selector (`memory_ids`, at most 100) unless `confirm_all`, and
  refuses the two together.
- Errors are `{error_code, message}`; `v1/admin/usage` is `{total, enrichment_backlog}`.

Responses ignore fields memeval does not read, so a newer server keeps working.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Role = Literal["user", "assistant", "system", "tool"]
Modality = Literal["document", "observation", "conversation"]
FORGET_BATCH = 100
"""Ids per forget request: CortexDB takes at most this many in one selector."""


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def body(self) -> dict[str, Any]:
        """As JSON, leaving out what is unset rather than sending nulls."""
        return self.model_dump(mode="json", exclude_none=True)


class Response(BaseModel):
    model_config = ConfigDict(extra="ignore")


# ---- writes ------------------------------------------------------------------------------


class Message(Request):
    kind: Literal["message"] = "message"
    role: Role
    text: str


class WriteContext(Request):
    observed_at: datetime | None = None
    labels: list[str] | None = None


class Envelope(Request):
    scope: str
    modality: Modality
    content: Message
    context: WriteContext
    idempotency_key: str = Field(max_length=64)


class Bulk(Request):
    items: list[Envelope] = Field(max_length=1000)
    ordering: Literal["strict_temporal"] = "strict_temporal"


class Ack(Response):
    event_id: str
    replayed_from_idempotency: bool = False


class BulkAck(Response):
    results: list[Ack]


# ---- reads -------------------------------------------------------------------------------


class Budgets(Request):
    per_layer_limits: dict[str, int]


class MetadataFilter(Request):
    labels: list[str]


class Filters(Request):
    metadata: MetadataFilter


class Temporal(Request):
    valid_during: str = Field(description="Capture time, `start..end`; it filters.")


class RecallRequest(Request):
    scope: str
    query: str | None = None
    diagnostics: Literal["none"] = "none"
    budgets: Budgets
    filters: Filters | None = None
    temporal: Temporal | None = None


class EventContent(Response):
    kind: str = "message"
    role: str | None = None
    text: str = ""


class EventContext(Response):
    labels: list[str] = Field(default_factory=list)
    observed_at: datetime | None = None


class Event(Response):
    id: str
    modality: str = ""
    content: EventContent = Field(default_factory=EventContent)
    context: EventContext = Field(default_factory=EventContext)

    @model_validator(mode="before")
    @classmethod
    def _either_shape(cls, data: Any) -> Any:
        """`event_id` and top-level `labels`/`observed_at` (the API reference) read as `id`
        and `context.*` (the measured doubles); a field in `context` wins."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "id" not in data and "event_id" in data:
            data["id"] = data["event_id"]
        context = dict(data.get("context") or {})
        for field in ("labels", "observed_at"):
            if data.get(field) is not None and context.get(field) is None:
                context[field] = data[field]
        data["context"] = context
        return data


class EventPage(Response):
    items: list[Event] = Field(default_factory=list)
    has_more: bool = False
    next_cursor: str | None = None


def term(value: Any) -> str:
    """A claim part (`{type, id, name}`, `{type, datatype, value}` or plain text) as text."""
    if isinstance(value, dict):
        return str(value.get("name") or value.get("value") or value.get("id") or "")
    return "" if value is None else str(value)


class Claim(Response):
    subject: Any = None
    predicate: str = ""
    object: Any = None

    def describe(self) -> str:
        parts = (term(self.subject), self.predicate.replace("_", " "), term(self.object))
        return " ".join(p for p in parts if p)


class WireBelief(Response):
    id: str = ""
    claim: Claim = Field(default_factory=Claim)
    stance: str = "supported"
    confidence: float | None = None


class WireFact(Claim):
    id: str = ""


class Layers(Response):
    events: list[Event] = Field(default_factory=list)
    facts: list[WireFact] = Field(default_factory=list)
    beliefs: list[WireBelief] = Field(default_factory=list)


class Pack(Response):
    pack_id: str | None = None
    layers: Layers = Field(default_factory=Layers)
    context_block: str = ""


class Built(Response):
    built: int = 0
    items: list[WireBelief] = Field(default_factory=list)


class Listing(Response):
    """`GET v1/facts` and `v1/beliefs`: the rows come as `items` or under the layer's name."""

    items: list[dict[str, Any]] = Field(default_factory=list)
    facts: list[dict[str, Any]] = Field(default_factory=list)
    beliefs: list[dict[str, Any]] = Field(default_factory=list)

    def rows(self) -> list[dict[str, Any]]:
        return self.items or self.facts or self.beliefs


# ---- forget ------------------------------------------------------------------------------


class Selector(Request):
    memory_ids: list[str] = Field(min_length=1, max_length=FORGET_BATCH)


class ForgetRequest(Request):
    """Always by ids: an empty selector would mean the whole scope, and a scope-wide forget
    keeps the writes' idempotency keys, so a case retried on the scope would be swallowed."""

    scope: str
    selector: Selector
    cascade: Literal["derived_only"] = "derived_only"
    confirm_all: Literal[False] = False
    reason: str = "memeval: the case is done with this tenant"


# ---- account -----------------------------------------------------------------------------


class Whoami(Response):
    caller: str

    @field_validator("caller")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("whoami named no caller")
        return value.strip()


class Version(Response):
    version: str = "unknown"
    capabilities: list[str] = Field(default_factory=list)


class UsageTotal(Response):
    calls: int = 0
    tokens_total: int = 0
    tokens_unsplit: int = 0
    cost_usd: float = 0.0


class Backlog(Response):
    jobs_pending: int = 0
    jobs_queued_total: int = 0


class AdminUsage(Response):
    total: UsageTotal = Field(default_factory=UsageTotal)
    enrichment_backlog: Backlog = Field(default_factory=Backlog)
