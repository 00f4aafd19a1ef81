"""The lifecycle suite's data model: scripted scenarios and the probes that score them.

Every model forbids unknown fields, so a typo in a user's YAML is an error, not a silently
ignored key.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from memeval.suites.common import Slug, Strict, check_unique

DEFAULT_TENANT = "main"
DEFAULT_AGENT = "assistant"


class Via(StrEnum):
    """How a probe reaches the engine: each maps onto one lifecycle call."""

    ask = "ask"
    resume = "resume"
    compact = "compact"
    continue_ = "continue"
    context_doc = "context_doc"


class Tag(StrEnum):
    """Which KPI group a scenario also feeds, besides accuracy."""

    learning = "learning"
    surprise = "surprise"
    conflicts = "conflicts"


class Style(StrEnum):
    lexical = "lexical"
    paraphrase = "paraphrase"


class Document(Strict):
    id: Slug
    title: str = Field(min_length=1)
    text: str = Field(min_length=1)
    tenant: Slug = DEFAULT_TENANT


class Learning(Strict):
    id: Slug
    text: str = Field(min_length=1)
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    tenant: Slug = DEFAULT_TENANT
    agent: Slug = DEFAULT_AGENT


class ToolCall(Strict):
    """A scripted tool call; its result only survives if the agent writes it into its reply."""

    name: Slug
    args: dict[str, Any] = Field(default_factory=dict)
    result: str


class Exchange(Strict):
    user: str = Field(min_length=1)
    reply: str = Field(min_length=1)
    tools: list[ToolCall] = Field(default_factory=list)


class Thread(Strict):
    id: Slug
    tenant: Slug = DEFAULT_TENANT
    agent: Slug = DEFAULT_AGENT
    day: int = Field(default=0, ge=0, description="Days after the scenario's start date.")
    start: time = Field(default=time(9, 0), description="Time of day (UTC) of the first turn.")
    exchanges: list[Exchange] = Field(min_length=1)


class Probe(Strict):
    id: Slug
    question: str = Field(min_length=1)
    via: Via = Via.ask
    style: Style
    expect: list[str] = Field(default_factory=list)
    stale: list[str] = Field(default_factory=list)
    forbidden: list[str] = Field(default_factory=list)
    accept: list[str] = Field(default_factory=list)
    tenant: Slug = DEFAULT_TENANT
    agent: Slug = DEFAULT_AGENT
    thread: Slug | None = Field(
        default=None, description="resume/compact/continue: the thread it refers to."
    )
    focus: str | None = Field(default=None, description="resume: what the session is about.")
    drop: int | None = Field(
        default=None, ge=1, description="compact: how many leading exchanges are dropped."
    )
    in_prompt_from: int | None = Field(
        default=None,
        ge=0,
        description="continue: exchanges from this index on are still in the prompt.",
    )
    heading: str | None = Field(default=None, description="context_doc: the document's heading.")
    scored: bool = Field(default=True, description="False for a pure leak check.")

    @model_validator(mode="after")
    def _shape(self) -> Probe:
        if self.scored and not self.expect:
            raise ValueError("a scored probe needs at least one `expect` string")
        if not self.scored and not self.forbidden:
            raise ValueError("an unscored probe is a leak check and needs `forbidden` strings")
        needs_thread = {Via.compact: "drop", Via.continue_: "in_prompt_from"}
        if self.via in needs_thread:
            field = needs_thread[self.via]
            if self.thread is None or getattr(self, field) is None:
                raise ValueError(f"via `{self.via}` needs `thread` and `{field}`")
        if self.via is Via.context_doc and not self.heading:
            raise ValueError("via `context_doc` needs a `heading`")
        return self


class Scenario(Strict):
    kind: Literal["scenario"] = "scenario"
    name: Slug
    title: str = Field(min_length=1)
    about: str = Field(default="", description="What the scenario measures, for humans.")
    start: date = Field(description="The scenario day: day 0 of every thread.")
    tags: list[Tag] = Field(default_factory=list)
    documents: list[Document] = Field(default_factory=list)
    learnings: list[Learning] = Field(default_factory=list)
    threads: list[Thread] = Field(default_factory=list)
    probes: list[Probe] = Field(min_length=1)

    @property
    def id(self) -> str:
        return f"lifecycle/{self.name}"

    @field_validator("documents", "learnings", "threads", "probes")
    @classmethod
    def _unique(cls, items: list[Any]) -> list[Any]:
        return check_unique(items)

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        threads = {t.id: t for t in self.threads}
        for probe in self.probes:
            if probe.thread is None:
                continue
            if probe.thread not in threads:
                raise ValueError(f"probe `{probe.id}` names unknown thread `{probe.thread}`")
            size = len(threads[probe.thread].exchanges)
            for field in ("drop", "in_prompt_from"):
                value = getattr(probe, field)
                if value is not None and value > size:
                    raise ValueError(
                        f"probe `{probe.id}`: `{field}` is {value} but thread "
                        f"`{probe.thread}` has only {size} exchanges"
                    )
        return self

    @property
    def tenants(self) -> list[str]:
        """Every tenant the scenario writes to or asks from, each isolated from the others."""
        names = {d.tenant for d in self.documents} | {lr.tenant for lr in self.learnings}
        names |= {t.tenant for t in self.threads} | {p.tenant for p in self.probes}
        return sorted(names)

    def thread_start(self, thread: Thread) -> datetime:
        day = self.start + timedelta(days=thread.day)
        return datetime.combine(day, thread.start, tzinfo=UTC)

    @property
    def probe_end(self) -> datetime:
        """Probes ask after every thread has finished: one day after the last thread's day."""
        last = max((t.day for t in self.threads), default=0)
        return datetime.combine(self.start + timedelta(days=last + 1), time(9, 0), tzinfo=UTC)
