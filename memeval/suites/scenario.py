"""The lifecycle suite's data model: scripted scenarios and the probes that score them.

Every model forbids unknown fields, so a typo in a user's YAML is an error, not a silently
ignored key.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from memeval.suites.common import (
    MAX_DAY,
    MAX_QUESTION,
    Match,
    Slug,
    Strict,
    Tag,
    check_unique,
    in_years,
)
from memeval.suites.fixture import Trust, utc

DEFAULT_TENANT = "main"
DEFAULT_AGENT = "assistant"


class Via(StrEnum):
    """How a probe reaches the engine: each maps onto one lifecycle call."""

    ask = "ask"
    resume = "resume"
    compact = "compact"
    continue_ = "continue"
    context_doc = "context_doc"


class ScenarioTag(StrEnum):
    """Which KPI group a scenario also feeds, besides accuracy."""

    learning = "learning"
    surprise = "surprise"
    conflicts = "conflicts"


class Style(StrEnum):
    lexical = "lexical"
    paraphrase = "paraphrase"


Role = Literal["user", "assistant"]


class Written(Strict):
    """What documents and learnings share: when they were written, who vouches, what they replace.

    `day` counts from the scenario's start (midnight UTC); `at` is an exact time and wins."""

    id: Slug
    tenant: Slug = DEFAULT_TENANT
    day: int = Field(default=0, ge=0, le=MAX_DAY, description="Days after the scenario's start.")
    at: datetime | None = Field(default=None, description="Exact write time; overrides `day`.")
    trust: Trust | None = Field(
        default=None,
        description="Who vouches: `system` (a system of record) outranks `user` and `agent`.",
    )
    supersedes: Slug | None = Field(
        default=None, description="The id of an earlier document or learning this one replaces."
    )

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return utc(value)


class Document(Written):
    title: str = Field(min_length=1)
    text: str = Field(min_length=1)


class Learning(Written):
    text: str = Field(min_length=1)
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    agent: Slug = DEFAULT_AGENT


class ToolCall(Strict):
    """A scripted tool call. Memory sees only its name and id: its result survives only if the
    agent writes it into its reply text; the agent never appends it on its own."""

    name: Slug
    args: dict[str, Any] = Field(default_factory=dict)
    result: str


class Exchange(Strict):
    """A user turn and the agent's reply, a minute apart."""

    id: Slug | None = Field(
        default=None, description="Write id of both turns, for `evidence` (default `THREAD.N`)."
    )
    speaker: str | None = Field(default=None, description="Who wrote the user turn.")
    user: str = Field(min_length=1)
    reply: str = Field(min_length=1)
    tools: list[ToolCall] = Field(default_factory=list)


class FreeTurn(Strict):
    """One turn of a free transcript: any speaker, any order, its own time."""

    id: Slug | None = Field(
        default=None, description="Write id, for `evidence` (default `THREAD.N`, N from 0)."
    )
    speaker: str | None = Field(default=None, description="Who said it, e.g. `Caroline`.")
    role: Role = Field(
        default="user", description="`assistant` for the agent's own turns, `user` for anyone else."
    )
    text: str = Field(min_length=1)
    at: datetime | None = Field(
        default=None, description="When it was said; default one minute after the previous turn."
    )
    tools: list[ToolCall] = Field(default_factory=list)

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return utc(value)


@dataclasses.dataclass(frozen=True, slots=True)
class Line:
    """One turn of a thread as the agent plays it: every thread shape comes down to these.
    Derived from turns already validated, never read from input, so a plain record: a
    LongMemEval instance plays about 480 of them, and building each as a pydantic model was
    most of what reading the instance cost."""

    id: str
    evidence_id: str
    """The write id `evidence` names (an exchange's id)."""
    role: Role
    speaker: str | None
    text: str
    at: datetime
    tools: list[ToolCall] = dataclasses.field(default_factory=list)


class Thread(Strict):
    id: Slug
    tenant: Slug = DEFAULT_TENANT
    agent: Slug = DEFAULT_AGENT
    day: int = Field(default=0, ge=0, le=MAX_DAY, description="Days after the scenario's start.")
    start: time = Field(default=time(9, 0), description="Time of day (UTC) of the first turn.")
    exchanges: list[Exchange] = Field(
        default_factory=list, description="User/reply pairs; or give `turns` instead."
    )
    turns: list[FreeTurn] = Field(
        default_factory=list, description="A free list of turns; or give `exchanges` instead."
    )
    bulk: bool = Field(
        default=False,
        description="Load the thread as past history in one `write_history` call, no pre_turn.",
    )
    echo_packs: bool = Field(
        default=False,
        description="A careless host: each user turn is sent with the pack recalled for the "
        "previous one pasted in front of it, between the injected-context markers; the "
        "loop guard then searches every face for a stored copy.",
    )

    @model_validator(mode="after")
    def _echo_needs_recall(self) -> Thread:
        if self.echo_packs and self.bulk:
            raise ValueError("`echo_packs` pastes recalled packs, and a `bulk` thread recalls none")
        return self

    @model_validator(mode="after")
    def _one_shape(self) -> Thread:
        if bool(self.exchanges) == bool(self.turns):
            raise ValueError(
                "a thread gives either `exchanges` or `turns` (one of them, non-empty)"
            )
        ids = [x.id for x in self.exchanges if x.id is not None]
        ids += [t.id for t in self.turns if t.id is not None]
        if len(ids) != len(set(ids)):
            raise ValueError("turn and exchange ids must be unique within a thread")
        return self

    @property
    def size(self) -> int:
        """What `drop` and `in_prompt_from` count: exchanges, or turns of a free thread."""
        return len(self.exchanges) or len(self.turns)

    def line_index(self, position: int) -> int:
        """The first line of exchange (or free turn) number `position`."""
        return 2 * position if self.exchanges else position

    def lines(self, start: datetime) -> list[Line]:
        """Every turn in playing order. Exchanges: user then reply, a minute apart, two minutes
        per exchange. Free turns: their own `at`, else a minute after the previous turn."""
        out: list[Line] = []
        for i, ex in enumerate(self.exchanges):
            wid = ex.id or f"{self.id}.{i}"
            at = start + timedelta(minutes=2 * i)
            out.append(
                Line(id=wid, evidence_id=wid, role="user", speaker=ex.speaker, text=ex.user, at=at)
            )
            out.append(
                Line(
                    id=f"{wid}.reply",
                    evidence_id=wid,
                    role="assistant",
                    speaker=None,
                    text=ex.reply,
                    at=at + timedelta(minutes=1),
                    tools=ex.tools,
                )
            )
        at = start
        for i, turn in enumerate(self.turns):
            at = turn.at or (at + timedelta(minutes=1) if i else start)
            wid = turn.id or f"{self.id}.{i}"
            out.append(
                Line(
                    id=wid,
                    evidence_id=wid,
                    role=turn.role,
                    speaker=turn.speaker,
                    text=turn.text,
                    at=at,
                    tools=turn.tools,
                )
            )
        return out


class Probe(Strict):
    id: Slug
    question: str = Field(min_length=1, max_length=MAX_QUESTION)
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
    focus: str | None = Field(
        default=None, max_length=MAX_QUESTION, description="resume: what the session is about."
    )
    drop: int | None = Field(
        default=None, ge=1, description="compact: how many leading exchanges are dropped."
    )
    in_prompt_from: int | None = Field(
        default=None,
        ge=0,
        description="continue: exchanges from this index on are still in the prompt.",
    )
    heading: str | None = Field(
        default=None, max_length=MAX_QUESTION, description="context_doc: the document's heading."
    )
    scored: bool = Field(default=True, description="False for a pure leak check.")
    abstain: bool = Field(
        default=False,
        description='The right answer is "never said": the pack must come back empty or marked '
        "`abstained` (the fixtures' rule); `forbidden` may name the tempting wrong answers.",
    )
    evidence: list[Slug] = Field(
        default_factory=list,
        description="Ids of the writes that hold the answer (documents, learnings, exchanges, "
        "turns): scored by evidence recall and MRR.",
    )
    answer: str | None = Field(
        default=None, description="A gold answer in words, for token F1 (default: `expect` joined)."
    )
    tags: list[Tag] = Field(
        default_factory=list, description="Free tags, e.g. `category:temporal`, `difficulty:hard`."
    )
    match: Match = Field(default=Match.substring, description="How expected strings are found.")
    matches: dict[str, Match] = Field(
        default_factory=dict,
        description="A `match` for some strings alone (of expect, stale, forbidden, accept), "
        'e.g. `{"4.1": number}` beside a default `substring`.',
    )
    stale_as: Literal["string", "claim"] = Field(
        default="string",
        description="`claim`: a stale value counts only where it is presented as current; a "
        'unit calling it outdated ("no longer", "used to", "outdated") is right, not stale.',
    )
    abstain_by: Literal["empty", "no_forbidden"] = Field(
        default="empty",
        description="abstain probes without a model: `empty` passes an empty or flagged pack; "
        "`no_forbidden` passes any pack holding none of the `forbidden` strings.",
    )
    as_of: datetime | None = Field(
        default=None,
        description="Ask as at this moment instead of the scenario's evaluation time: the "
        "question's turn is dated so, and a model is told the date.",
    )
    log: bool | None = Field(
        default=None,
        description="ask/continue: log the question as a turn (default: the scenario's "
        "`log_probes`); false asks without writing anything to memory.",
    )
    lag: bool = Field(
        default=False,
        description="Also time write-to-ranked: from the ack of its one `evidence` document "
        "or learning to the first pack for this question that holds `expect`.",
    )

    @model_validator(mode="after")
    def _shape(self) -> Probe:
        if self.abstain and self.expect:
            raise ValueError("an `abstain` probe expects nothing; put wrong answers in `forbidden`")
        if self.scored and not self.expect and not self.abstain:
            raise ValueError(
                "a scored probe needs at least one `expect` string (or `abstain: true`)"
            )
        if not self.scored and not self.forbidden:
            raise ValueError("an unscored probe is a leak check and needs `forbidden` strings")
        if self.abstain_by == "no_forbidden" and not (self.abstain and self.forbidden):
            raise ValueError("`abstain_by: no_forbidden` needs `abstain: true` and `forbidden`")
        named = {*self.expect, *self.stale, *self.forbidden, *self.accept}
        stray = sorted(set(self.matches) - named)
        if stray:
            raise ValueError(
                f"`matches` names {stray}, which are not among expect, stale, forbidden or accept"
            )
        needs_thread = {Via.compact: "drop", Via.continue_: "in_prompt_from"}
        if self.via in needs_thread:
            field = needs_thread[self.via]
            if self.thread is None or getattr(self, field) is None:
                raise ValueError(f"via `{self.via}` needs `thread` and `{field}`")
        if self.via is Via.context_doc and not self.heading:
            raise ValueError("via `context_doc` needs a `heading`")
        return self

    @field_validator("as_of")
    @classmethod
    def _aware_as_of(cls, value: datetime | None) -> datetime | None:
        return utc(value)

    def match_for(self, text: str) -> Match:
        return self.matches.get(text, self.match)


class Noise(Strict):
    """Generated distractors (`memeval.suites.noise`): the tenant holds `items` writes in all,
    so pack hit and MRR are measured in a haystack, not in a handful of writes."""

    items: int = Field(ge=1, le=1_000_000, description="Total writes per tenant after padding.")
    seed: int = Field(default=0, description="Same seed, same distractors.")
    shape: Literal["turns", "documents"] = Field(
        default="turns",
        description="`turns`: chat history loaded by `write_history`; `documents`: ingested notes.",
    )
    tenants: list[Slug] = Field(
        default_factory=list, description="Tenants to pad (default: every tenant the case writes)."
    )
    needle: Literal["early", "middle", "late"] | None = Field(
        default=None,
        description="Where the scenario's own writes sit in the padded history: `early` (all "
        "distractors come after them), `middle` (half before, half after), `late` (all "
        "before); default: distractors spread over the month up to the last write.",
    )


class Erase(Strict):
    """An erase audit: after the probes, the scenario's writes are forgotten (some one by one,
    then the whole tenant) and every face the engine has is searched for the canaries. A user
    who deletes their data expects it gone from recall, answers, listings and whatever the
    engine distilled from it, not merely from the first page of results."""

    tenant: Slug = Field(default=DEFAULT_TENANT, description="The tenant that is forgotten.")
    canaries: list[str] = Field(
        min_length=1,
        description="Distinctive strings the tenant's writes hold; after forgetting, none may "
        "come back anywhere (compared ignoring case).",
    )
    by_id: list[Slug] = Field(
        default_factory=list,
        description="Write ids forgotten one by one before the whole tenant, where the engine "
        "can (`forget_write`): the canaries only they hold must go, at once.",
    )
    questions: list[str] = Field(
        min_length=1,
        description="What the audit asks every face after forgetting: questions a user would "
        "put to recover the forgotten data.",
    )
    heading: str | None = Field(
        default=None,
        max_length=MAX_QUESTION,
        description="The heading of the context document the audit compiles (default: the "
        "first question).",
    )

    @field_validator("canaries")
    @classmethod
    def _long_enough(cls, canaries: list[str]) -> list[str]:
        short = [c for c in canaries if len(c.strip()) < 6]
        if short:
            raise ValueError(
                f"canaries {short} are too short to be distinctive; use at least six "
                "characters, such as a made-up code or full name"
            )
        return canaries


class Scenario(Strict):
    kind: Literal["scenario"] = "scenario"
    name: Slug
    title: str = Field(min_length=1)
    about: str = Field(default="", description="What the scenario measures, for humans.")
    start: date = Field(description="The scenario day: day 0 of every thread.")
    _start_in_years = field_validator("start")(in_years)
    now: datetime | None = Field(
        default=None,
        description="Evaluation time: probes ask at it and the engine's clock reads it (default: "
        "the suite's `now`, else 09:00 the day after the last thread).",
    )
    tags: list[ScenarioTag] = Field(default_factory=list)
    log_probes: bool = Field(
        default=True, description="Whether ask/continue probes log their question as a turn."
    )
    noise: Noise | None = Field(
        default=None, description="Pad the tenants with generated distractors to a stated size."
    )
    documents: list[Document] = Field(default_factory=list)
    learnings: list[Learning] = Field(default_factory=list)
    threads: list[Thread] = Field(default_factory=list)
    probes: list[Probe] = Field(min_length=1)
    erase: Erase | None = Field(
        default=None, description="After the probes, forget and search every face for canaries."
    )

    @property
    def id(self) -> str:
        return f"lifecycle/{self.name}"

    @field_validator("documents", "learnings", "threads", "probes")
    @classmethod
    def _unique(cls, items: list[Any]) -> list[Any]:
        return list(check_unique(items))

    @model_validator(mode="after")
    def _noise_can_be_drawn(self) -> Scenario:
        if self.noise is None:
            return self
        from memeval.suites.noise import blocking  # the generator is built on this model

        word = blocking(self)
        if word is not None:
            raise ValueError(
                f"`noise` cannot be generated: every distractor would hold `{word}`, which a "
                "probe expects, counts as stale or forbids; make that string longer or give "
                "the probe `match: word`"
            )
        return self

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        threads = {t.id: t for t in self.threads}
        writes = self.write_ids()
        for probe in self.probes:
            unknown = [e for e in probe.evidence if e not in writes]
            if unknown:
                raise ValueError(
                    f"probe `{probe.id}`: `evidence` names unknown write ids {unknown}; "
                    "use document, learning, exchange or turn ids (default `THREAD.N`)"
                )
            if probe.thread is None:
                continue
            if probe.thread not in threads:
                raise ValueError(f"probe `{probe.id}` names unknown thread `{probe.thread}`")
            thread = threads[probe.thread]
            unit = "exchanges" if thread.exchanges else "turns"
            for field in ("drop", "in_prompt_from"):
                value = getattr(probe, field)
                if value is not None and value > thread.size:
                    raise ValueError(
                        f"probe `{probe.id}`: `{field}` is {value} but thread "
                        f"`{probe.thread}` has only {thread.size} {unit}"
                    )
        written = {w.id for w in [*self.documents, *self.learnings]}
        for probe in self.probes:
            if probe.lag and (len(probe.evidence) != 1 or probe.evidence[0] not in written):
                raise ValueError(
                    f"probe `{probe.id}`: `lag` times one write, so its `evidence` must name "
                    "exactly one document or learning"
                )
            if probe.lag and not probe.expect:
                raise ValueError(f"probe `{probe.id}`: `lag` needs `expect` to see the write")
        for w in [*self.documents, *self.learnings]:
            if w.supersedes is not None and w.supersedes not in written:
                raise ValueError(f"`{w.id}`: `supersedes` names unknown id `{w.supersedes}`")
        if self.now is not None and self.now < self.last_write:
            raise ValueError(
                f"`now` ({self.now.isoformat()}) is before the last write "
                f"({self.last_write.isoformat()}); probes must ask after everything is written"
            )
        return self

    @model_validator(mode="after")
    def _canaries_are_written(self) -> Scenario:
        if self.erase is None:
            return self
        erase, texts = self.erase, self.tenant_texts(self.erase.tenant)
        unknown = [w for w in erase.by_id if w not in texts]
        if unknown:
            raise ValueError(
                f"`erase.by_id` names {unknown}, which are not writes of tenant `{erase.tenant}`"
            )
        held = [t for ts in texts.values() for t in ts]
        unwritten = [c for c in erase.canaries if not any(_holds(t, c) for t in held)]
        if unwritten:
            raise ValueError(
                f"`erase.canaries` {unwritten} are in no write of tenant `{erase.tenant}`; a "
                "canary must be written before its erasure can be audited"
            )
        asked = [
            q
            for q in [*erase.questions, erase.heading or ""]
            for c in erase.canaries
            if _holds(q, c)
        ]
        if asked:
            raise ValueError(
                f"the erase question {asked[0]!r} holds a canary; an engine that echoes the "
                "question would fail for no fault, so ask without naming it"
            )
        if erase.by_id and not self.canaries_of(erase.by_id):
            raise ValueError(
                "`erase.by_id` forgets no canary: every canary is also held by a write kept; "
                "forget a write that alone holds one"
            )
        return self

    def tenant_texts(self, tenant: str) -> dict[str, list[str]]:
        """What each write id `evidence` may name holds, for one tenant's writes alone."""
        ids = {w.id for w in [*self.documents, *self.learnings] if w.tenant == tenant}
        ids |= {
            line.evidence_id
            for t in self.threads
            if t.tenant == tenant
            for line in self.thread_lines[t.id]
        }
        return {k: v for k, v in self.write_texts().items() if k in ids}

    def canaries_of(self, forgotten: list[str]) -> list[str]:
        """The erase canaries held only by `forgotten` writes: forgetting those must remove
        them, while a canary some kept write also holds may rightly stay."""
        assert self.erase is not None
        texts = self.tenant_texts(self.erase.tenant)
        kept = [t for w, ts in texts.items() if w not in forgotten for t in ts]
        return [c for c in self.erase.canaries if not any(_holds(t, c) for t in kept)]

    @field_validator("now")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return utc(value)

    @cached_property
    def thread_lines(self) -> dict[str, tuple[Line, ...]]:
        """Each thread's lines, by thread id, built once: the model is frozen, and validation,
        noise, the runner and every probe's clock read them (a LoCoMo scenario has thousands)."""
        return {t.id: tuple(t.lines(self.thread_start(t))) for t in self.threads}

    def write_ids(self) -> set[str]:
        """Every id `evidence` may name."""
        ids = {w.id for w in [*self.documents, *self.learnings]}
        return ids | {line.evidence_id for lines in self.thread_lines.values() for line in lines}

    def write_texts(self) -> dict[str, list[str]]:
        """What was written under each id `evidence` may name (an exchange holds two turns)."""
        out: dict[str, list[str]] = {d.id: [f"{d.title} {d.text}"] for d in self.documents}
        out |= {lr.id: [lr.text] for lr in self.learnings}
        for lines in self.thread_lines.values():
            for line in lines:
                out.setdefault(line.evidence_id, []).append(line.text)
        return out

    def write_aliases(self) -> dict[str, str]:
        """Engine-side turn ids (`X.reply`) mapped to the id `evidence` names (`X`)."""
        return {line.id: line.evidence_id for lines in self.thread_lines.values() for line in lines}

    def written_at(self, item: Written) -> datetime:
        return item.at or datetime.combine(self.start + timedelta(days=item.day), time(0), UTC)

    @cached_property
    def last_write(self) -> datetime:
        times = [self.written_at(w) for w in [*self.documents, *self.learnings]]
        times += [line.at for lines in self.thread_lines.values() for line in lines]
        return max(times, default=datetime.combine(self.start, time(0), UTC))

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
        """When probes ask: `now`, else 09:00 the day after the last write's day."""
        if self.now is not None:
            return self.now
        last = self.last_write.date()
        return datetime.combine(last + timedelta(days=1), time(9, 0), tzinfo=UTC)

    @property
    def evaluation_time(self) -> datetime:
        return self.probe_end

    def logs(self, probe: Probe) -> bool:
        return self.log_probes if probe.log is None else probe.log


def _holds(text: str, canary: str) -> bool:
    return canary.casefold() in text.casefold()
