"""CortexDB's v1 wire as memeval uses it: request and response bodies.

Public material on CortexDB confirms the bearer key (`CORTEX_API_KEY`), the default port 3141
and that writes are accepted before they are indexed. The route list comes from memeval's
adapters issue; the body shapes below are memeval's reading of them, kept in this one module
so that a correction touches nothing else:

- every write is an *experience* `{scope, kind, text, ...}` answered by `{id, jobs?}`; `jobs`
  name derived work (belief builds) the write queued, replayed at the synthesis step;
- `GET v1/events?scope=&cursor=&limit=` pages `{events: [{id, type, experience_id}],
  next_cursor}`; an `experience.indexed` event makes that experience visible;
- `POST v1/recall` answers `{items, markdown?, tokens?, abstained?, answer?, conflicts?}`;
- inspector lists are `{facts: [...]}`, `{beliefs: [...]}`, `{conflicts: [...]}`,
  `{scopes: [...]}`; `v1/admin/usage` is `{calls, tokens, cost_usd, enrichment: {pending}}`.

Responses ignore fields memeval does not read, so a newer server keeps working.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memeval.engines.types import Belief, ConflictReport, Hit, HitSpan, ToolCallRef

INDEXED = "experience.indexed"
Purpose = Literal["query", "pre_turn", "session_start", "compaction", "context"]


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def body(self) -> dict[str, Any]:
        """As JSON, leaving out what is unset rather than sending nulls."""
        return self.model_dump(mode="json", exclude_none=True)


class Response(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Fact(Request):
    """An assertion's structure, for the fixture face; CortexDB may extract its own too."""

    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    trust: str | None = None
    exclusive: bool = False
    supersedes: str | None = None
    retracts: str | None = None
    challenges: str | None = None
    derived_from: list[str] = Field(default_factory=list)
    excerpt: str | None = None


class Experience(Request):
    scope: str
    kind: Literal["assertion", "document", "learning", "turn"]
    text: str
    external_id: str | None = None
    title: str | None = None
    source: str | None = None
    confidence: float | None = None
    agent: str | None = None
    thread: str | None = None
    role: str | None = None
    at: datetime | None = None
    tool_calls: list[ToolCallRef] = Field(default_factory=list)
    fact: Fact | None = None
    idempotency_key: str | None = Field(default=None, description="Per item, in bulk writes.")


class Bulk(Request):
    items: list[Experience]


class Written(Response):
    id: str
    jobs: list[str] = Field(default_factory=list)


class BulkWritten(Response):
    items: list[Written] = Field(default_factory=list)


class Event(Response):
    id: str
    type: str
    experience_id: str | None = None


class EventPage(Response):
    events: list[Event] = Field(default_factory=list)
    next_cursor: str | None = None


class RecallTurn(Request):
    role: str
    text: str
    at: datetime


class RecallRequest(Request):
    scope: str
    query: str
    k: int
    purpose: Purpose
    as_of: datetime | None = None
    agent: str | None = None
    thread: str | None = None
    heading: str | None = None
    exclude: list[RecallTurn] = Field(
        default_factory=list, description="Turns still in the prompt: never recall them."
    )


class Span(Response):
    start: int
    end: int
    text: str


class Item(Response):
    id: str
    text: str
    external_id: str | None = None
    source: str | None = None
    sources: list[str] = Field(default_factory=list)
    score: float | None = None
    confidence: float | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    span: Span | None = None
    derived_from: list[str] = Field(default_factory=list)

    def hit(self) -> Hit:
        return Hit(
            text=self.text,
            source=self.source,
            span=HitSpan(**self.span.model_dump()) if self.span else None,
            confidence=self.confidence,
            assertion_id=self.external_id,
            valid_from=self.valid_from,
            valid_to=self.valid_to,
            derivation=self.derived_from,
            sources=self.sources,
            score=self.score,
        )


class Conflict(Response):
    ids: list[str]
    resolved_to: str | None = None
    reason: str = ""

    def report(self) -> ConflictReport | None:
        return ConflictReport(**self.model_dump()) if len(self.ids) >= 2 else None


class Recalled(Response):
    items: list[Item] = Field(default_factory=list)
    markdown: str | None = None
    tokens: int | None = None
    abstained: bool = False
    answer: str | None = None
    conflicts: list[Conflict] = Field(default_factory=list)


class WireBelief(Response):
    subject: str = ""
    value: str = ""
    text: str | None = None
    sources: list[str] = Field(default_factory=list)
    disagreement: list[str] = Field(default_factory=list)

    def belief(self) -> Belief:
        return Belief(
            subject=self.subject,
            value=self.value or self.text or "",
            sources=self.sources,
            disagreement=self.disagreement,
        )

    def describe(self) -> str:
        return self.text or f"{self.subject}: {self.value}"


class Built(Response):
    beliefs: list[WireBelief] = Field(default_factory=list)
    built: int | None = None


class WireFact(Response):
    text: str | None = None
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None

    def describe(self) -> str:
        return self.text or " ".join(p for p in (self.subject, self.predicate, self.object) if p)


class Facts(Response):
    facts: list[WireFact] = Field(default_factory=list)


class Beliefs(Response):
    beliefs: list[WireBelief] = Field(default_factory=list)


class Conflicts(Response):
    conflicts: list[Conflict] = Field(default_factory=list)


class Scopes(Response):
    scopes: list[str] = Field(default_factory=list)


class Actor(Response):
    actor: str


class Version(Response):
    version: str = "unknown"


class Health(Response):
    status: str


class Backlog(Response):
    pending: int = 0


class AdminUsage(Response):
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    enrichment: Backlog = Field(default_factory=Backlog)
