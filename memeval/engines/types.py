"""The values that cross the engine boundary, in both directions.

Engines in other processes or languages speak these same shapes over HTTP, so they are plain
pydantic models with no behaviour beyond small conveniences.
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memeval.suites.fixture import Assertion
from memeval.text import mended

WHEN_FIELDS = ("at", "as_of")
"""The times memeval itself sends (when a turn happened, when a question is asked), held to
the rule below; times an engine reports (`valid_from`, ...) keep pydantic's wider reading."""
WHEN_PATTERN = r"^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-5][0-9]"
"""RFC 3339 as Python can hold it: no year 0000, no leap second. Published in the OpenAPI
schema, so a generated client (or a schema fuzzer) knows what the server takes."""
_WHEN = re.compile(WHEN_PATTERN)


def _when_rule(schema: dict[str, Any]) -> None:
    for name in WHEN_FIELDS:
        prop = schema.get("properties", {}).get(name)
        for sub in [prop or {}, *(prop or {}).get("anyOf", [])]:
            if sub.get("format") == "date-time":
                sub["pattern"] = WHEN_PATTERN


INJECTED_OPEN = "<memory-context>"
INJECTED_CLOSE = "</memory-context>"
"""A host pastes the pack into its prompt between these markers. A careless host then logs the
whole prompt as the user's turn, and an engine that stores what lies between them feeds its own
recall back into memory, one copy per turn: an engine must drop the block from every write."""


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_when_rule)

    @model_validator(mode="before")
    @classmethod
    def _mended(cls, data: Any) -> Any:
        """Engine answers and `memeval serve` bodies are outside text: a lone surrogate in
        them becomes U+FFFD here, before it can reach a store, a report or a reply. A time
        memeval sends must be written as one: pydantic would read `0` as 1970-01-01."""
        for name in WHEN_FIELDS:
            value = data.get(name) if isinstance(data, dict) and name in cls.model_fields else None
            if value is None or isinstance(value, datetime):
                continue
            if not isinstance(value, str) or not _WHEN.match(value):
                raise ValueError(
                    f"`{name}` must be an ISO 8601 time such as 2026-03-02T09:00:00Z, not {value!r}"
                )
        return mended(data)


class Capability(StrEnum):
    """What an engine can do. A check that needs a missing one is reported `unsupported`."""

    store = "store"  # fixture face: store, query, reset
    query_at = "query_at"  # point-in-time queries
    conflicts = "conflicts"  # reports contradictions
    abstain = "abstain"  # can say "I don't know"
    provenance = "provenance"  # hits carry their source
    spans = "spans"  # hits carry the supporting span
    derivation = "derivation"  # hits carry the chain of facts they were derived from
    lifecycle = "lifecycle"  # ingest, pre_turn, post_turn, start_session, compaction, forget
    context_doc = "context_doc"  # compiles a context document under one heading
    beliefs = "beliefs"  # build_beliefs distils facts
    inspect = "inspect"  # shows the facts and beliefs it derived
    usage = "usage"  # reports what it spent
    forget_write = "forget_write"  # forgets one write by the id the case gave it


# ---- fixture face -----------------------------------------------------------------------


class HitSpan(Model):
    start: int
    end: int
    text: str


class Hit(Model):
    text: str
    source: str | None = None
    span: HitSpan | None = None
    confidence: float | None = None
    assertion_id: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    derivation: list[str] = Field(
        default_factory=list, description="Ids of the facts this hit was derived from."
    )
    sources: list[str] = Field(
        default_factory=list, description="Every source that corroborates this hit."
    )
    score: float | None = None


class ConflictReport(Model):
    ids: list[str] = Field(min_length=2)
    resolved_to: str | None = None
    reason: str = ""


class QueryResult(Model):
    hits: list[Hit] = Field(default_factory=list)
    answer: str | None = None
    abstained: bool = False
    conflicts: list[ConflictReport] = Field(default_factory=list)


# ---- lifecycle face ---------------------------------------------------------------------


class ToolCallRef(Model):
    """All that memory keeps of a tool call: its name and id, never its result."""

    name: str
    id: str


class Turn(Model):
    role: Literal["user", "assistant"]
    text: str
    at: datetime
    tool_calls: list[ToolCallRef] = Field(default_factory=list)
    speaker: str | None = Field(
        default=None, description="Who said it, when a thread has several people (`role` user)."
    )
    id: str | None = Field(
        default=None,
        description="The case's id for this write; an engine may echo it in `Pack.unit_ids`.",
    )


class MemoryItem(Model):
    """A document or a learning handed to `ingest`."""

    id: str
    kind: Literal["document", "learning"] = "document"
    title: str = ""
    text: str
    confidence: float = 1.0
    agent: str | None = None
    at: datetime | None = None
    trust: Literal["agent", "user", "system"] | None = Field(
        default=None, description="Who vouches for it; `system` (a system of record) ranks highest."
    )
    supersedes: str | None = Field(
        default=None, description="The id of an earlier item this one replaces."
    )


class TurnContext(Model):
    agent: str
    thread: str
    turn: Turn
    in_prompt: list[Turn] = Field(
        default_factory=list, description="Turns the model still sees; a pack must not repeat them."
    )
    log: bool = Field(
        default=True,
        description="False: recall only. The turn is a probe and must not be written to memory.",
    )


class Pack(Model):
    """Markdown: a `#` title, then `##` sections in priority order."""

    markdown: str
    tokens: int = 0
    abstained: bool = Field(
        default=False, description="The engine holds nothing on the question (as in QueryResult)."
    )
    unit_ids: list[list[str]] | None = Field(
        default=None,
        description="Optional: for each unit of the pack (its non-empty, non-heading lines in "
        "order), the ids of the writes it came from (`MemoryItem.id`, `Turn.id`). Without it, "
        "evidence is traced by text.",
    )


class Belief(Model):
    subject: str
    value: str
    sources: list[str] = Field(default_factory=list)
    disagreement: list[str] = Field(
        default_factory=list, description="Other values seen for the same slot."
    )


class BeliefReport(Model):
    beliefs: list[Belief] = Field(default_factory=list)
    built: int = 0


class Derived(Model):
    """What an engine derived from the writes: facts and beliefs, for the `captured` metric."""

    facts: list[str] = Field(default_factory=list)
    beliefs: list[str] = Field(default_factory=list)


class Usage(Model):
    calls: int = 0
    tokens: int = 0
    usd_micros: int = 0


__all__ = [
    "Assertion",
    "Belief",
    "BeliefReport",
    "Capability",
    "ConflictReport",
    "Derived",
    "Hit",
    "HitSpan",
    "MemoryItem",
    "Pack",
    "QueryResult",
    "ToolCallRef",
    "Turn",
    "TurnContext",
    "Usage",
]
