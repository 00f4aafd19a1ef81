"""The dimensions suite's data model: stored assertions, then queries with typed checks."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import (
    AwareDatetime,
    Field,
    GetJsonSchemaHandler,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from memeval.suites.common import (
    DEFAULT_NOW,
    MAX_QUESTION,
    Match,
    Slug,
    Strict,
    Tag,
    check_unique,
    in_years,
)


class Dimension(StrEnum):
    temporal = "temporal"
    conflict = "conflict"
    multihop = "multihop"
    abstention = "abstention"
    provenance = "provenance"


WEIGHTS: dict[Dimension, float] = {
    Dimension.temporal: 0.25,
    Dimension.conflict: 0.25,
    Dimension.multihop: 0.20,
    Dimension.abstention: 0.20,
    Dimension.provenance: 0.10,
}


class Trust(StrEnum):
    """Who vouches for an assertion; conflicts resolve toward the higher level."""

    agent = "agent"
    user = "user"
    system = "system"

    @property
    def rank(self) -> int:
        return list(Trust).index(self)


def utc(value: datetime | None) -> datetime | None:
    """Naive times read as UTC; every suite time passes here, so its range is checked here."""
    if value is not None and value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return in_years(value)


class Span(Strict):
    """Character offsets into the assertion's `excerpt` (or its text when it has none)."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Span:
        if self.end <= self.start:
            raise ValueError("span `end` must be greater than `start`")
        return self


class Assertion(Strict):
    id: Slug
    text: str = Field(min_length=1)
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    source: str = Field(min_length=1, description="Where the assertion came from.")
    excerpt: str | None = Field(
        default=None, description="The source passage the assertion was read from."
    )
    span: Span | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    trust: Trust = Trust.user
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    recorded_at: datetime | None = None
    exclusive: bool = Field(
        default=False, description="The slot (subject, predicate) holds one value at a time."
    )
    supersedes: Slug | None = Field(default=None, description="A correction of this assertion.")
    retracts: Slug | None = Field(default=None, description="Withdraws this assertion.")
    challenges: Slug | None = Field(default=None, description="Disputes this assertion.")
    derived_from: list[Slug] = Field(default_factory=list)

    @field_validator("valid_from", "valid_to", "recorded_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        """Naive times are read as UTC so that every comparison is well defined."""
        return utc(value)

    @model_validator(mode="after")
    def _consistent(self) -> Assertion:
        triple = (self.subject, self.predicate, self.object)
        if any(triple) and not all(triple):
            raise ValueError("give all of `subject`, `predicate` and `object`, or none of them")
        if self.valid_from and self.valid_to and self.valid_to <= self.valid_from:
            raise ValueError("`valid_to` must be after `valid_from`")
        if self.span is not None:
            base = self.excerpt or self.text
            if self.span.end > len(base):
                raise ValueError(
                    f"`span` ends at {self.span.end} but the "
                    f"{'excerpt' if self.excerpt else 'text'} has {len(base)} characters"
                )
        return self

    @property
    def span_text(self) -> str | None:
        if self.span is None:
            return None
        return (self.excerpt or self.text)[self.span.start : self.span.end]


class CheckKind(StrEnum):
    contains = "contains"
    not_contains = "not_contains"
    not_first = "not_first"
    abstain = "abstain"
    conflict = "conflict"
    source = "source"
    sources = "sources"
    not_source = "not_source"
    span = "span"
    any_of = "any_of"
    all_of = "all_of"
    before = "before"


class Scope(StrEnum):
    """Which of the engine's texts a `contains`/`not_contains` check reads.

    `hits`: the answer and the leading `within` hits (default of `contains`); `all`: the answer
    and every hit (default of `not_contains`); `answer`: what the engine says, i.e. its answer
    and, unless it abstained, its first hit (an abstaining engine's hits are not an answer)."""

    hits = "hits"
    all = "all"
    answer = "answer"


_OPTIONS = ("within", "match", "scope")


class Check(Strict):
    """One typed check; YAML writes it as a one-key mapping such as `contains: Lisbon`, with
    optional `within`, `match` and `scope` beside it."""

    kind: CheckKind
    value: str | list[str] | bool | None = None
    any_of: list[Check] = Field(
        default_factory=list, description="any_of: the alternatives; one passing is enough."
    )
    all_of: list[Check] = Field(
        default_factory=list,
        description="all_of: checks that must all pass, e.g. one alternative of an `any_of` "
        "that needs both values given.",
    )
    within: int = Field(
        default=1,
        ge=1,
        description="contains/source/sources/not_source/span: how many leading hits "
        "(and the answer) count.",
    )
    match: Match = Field(default=Match.substring, description="How the string is found.")
    scope: Scope | None = Field(
        default=None, description="contains/not_contains: which texts are read (see Scope)."
    )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The shape authors write, `contains: Lisbon` with options beside it, rather than the
        `kind`/`value` pair it is read into, so an editor checks the YAML as written."""
        handler(core)
        text = {"type": "string", "minLength": 1}
        ids = {"type": "array", "items": {"type": "string"}}
        values: dict[str, Any] = {k.value: text for k in CheckKind}
        values |= {
            "abstain": {"const": True},
            "conflict": ids | {"minItems": 2},
            "sources": ids | {"minItems": 1},
            "any_of": {"type": "array", "minItems": 2, "items": {"type": "object"}},
            "all_of": {"type": "array", "minItems": 2, "items": {"type": "object"}},
            "before": {"type": "array", "minItems": 2, "maxItems": 2, "items": text},
        }
        options = {
            "within": {"type": "integer", "minimum": 1},
            "match": {"enum": [m.value for m in Match]},
            "scope": {"enum": [s.value for s in Scope]},
        }
        return {
            "title": "Check",
            "description": cls.__doc__,
            "type": "object",
            "properties": values | options,
            "additionalProperties": False,
            "oneOf": [{"required": [k.value]} for k in CheckKind],
        }

    @model_validator(mode="before")
    @classmethod
    def _one_key(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "kind" in data:
            return data
        kinds = [k for k in data if k not in _OPTIONS]
        if len(kinds) != 1:
            raise ValueError(
                "a check is a mapping with exactly one kind, e.g. `contains: Lisbon`, and "
                f"optional {', '.join(f'`{o}`' for o in _OPTIONS)}; "
                f"kinds are: {', '.join(k.value for k in CheckKind)}"
            )
        kind = kinds[0]
        if kind not in CheckKind.__members__:
            raise ValueError(
                f"unknown check kind `{kind}`; use one of: {', '.join(k.value for k in CheckKind)}"
            )
        out = {"kind": kind, **{o: data[o] for o in _OPTIONS if o in data}}
        out[kind if kind in ("any_of", "all_of") else "value"] = data[kind]
        return out

    @model_validator(mode="after")
    def _value_fits(self) -> Check:
        kind = self.kind
        if kind in (CheckKind.any_of, CheckKind.all_of):
            if len(self.any_of if kind is CheckKind.any_of else self.all_of) < 2:
                raise ValueError(f"`{kind}` takes a list of two or more checks")
        elif kind is CheckKind.before:
            if (
                not isinstance(self.value, list)
                or len(self.value) != 2
                or not all(v.strip() for v in self.value)
            ):
                raise ValueError(
                    "`before` takes two strings: the one that must come first, then the other"
                )
        elif kind is CheckKind.abstain:
            if self.value is not True:
                raise ValueError("`abstain` takes `true`")
        elif kind is CheckKind.conflict:
            if not isinstance(self.value, list) or len(self.value) < 2:
                raise ValueError("`conflict` takes a list of two or more assertion ids")
        elif kind is CheckKind.sources:
            if (
                not isinstance(self.value, list)
                or not self.value
                or not all(v.strip() for v in self.value)
            ):
                raise ValueError("`sources` takes a list of the exact sources to be cited")
        elif not isinstance(self.value, str) or not self.value.strip():
            raise ValueError(f"`{kind}` takes a non-empty string")
        if self.scope is not None and kind not in (CheckKind.contains, CheckKind.not_contains):
            raise ValueError("`scope` applies to `contains` and `not_contains` only")
        return self

    @property
    def text(self) -> str:
        assert isinstance(self.value, str)
        return self.value

    @property
    def ids(self) -> list[str]:
        assert isinstance(self.value, list)
        return self.value

    @property
    def label(self) -> str:
        """The check's value as a report shows it."""
        if self.kind is CheckKind.any_of:
            return " | ".join(f"{c.kind.value}: {c.label}" for c in self.any_of)
        if self.kind is CheckKind.all_of:
            return " & ".join(f"{c.kind.value}: {c.label}" for c in self.all_of)
        if self.kind is CheckKind.before:
            return " before ".join(self.ids)
        if isinstance(self.value, list):
            return ", ".join(self.value)
        return str(self.value)

    def flat(self) -> list[Check]:
        """This check and every alternative inside it."""
        return [self, *(inner for c in [*self.any_of, *self.all_of] for inner in c.flat())]


class Query(Strict):
    text: str = Field(min_length=1, max_length=MAX_QUESTION)
    as_of: AwareDatetime | None = Field(default=None, description="Ask about this moment.")
    checks: list[Check] = Field(min_length=1)
    _as_of_in_years = field_validator("as_of")(in_years)
    acceptable_conflicts: list[list[Slug]] = Field(
        default_factory=list,
        description="Conflicts a careful reader might raise here: reporting one (naming two of "
        "its ids) is neither required nor counted as spurious.",
    )
    tags: list[Tag] = Field(default_factory=list, description="Free tags; reports group by them.")

    @field_validator("acceptable_conflicts")
    @classmethod
    def _pairs(cls, sets: list[list[str]]) -> list[list[str]]:
        if any(len(ids) < 2 for ids in sets):
            raise ValueError("each acceptable conflict lists two or more assertion ids")
        return sets


class Fixture(Strict):
    kind: Literal["fixture"] = "fixture"
    dimension: Dimension
    name: Slug
    title: str = Field(min_length=1)
    tests: str = Field(
        min_length=1, description="The kind of behaviour tested, e.g. `point_in_time`."
    )
    about: str = ""
    now: datetime | None = Field(
        default=None,
        description="Evaluation time: queries without `as_of` ask at it, and the engine's clock "
        "reads it (default: the suite's `now`, else 2026-12-01T12:00Z).",
    )
    assertions: list[Assertion] = Field(min_length=1)
    queries: list[Query] = Field(min_length=1)

    @property
    def id(self) -> str:
        return f"dimensions/{self.dimension.value}/{self.name}"

    @field_validator("assertions")
    @classmethod
    def _unique(cls, items: list[Assertion]) -> list[Assertion]:
        return list(check_unique(items))

    @model_validator(mode="after")
    def _references(self) -> Fixture:
        ids = {a.id for a in self.assertions}
        for a in self.assertions:
            for field in ("supersedes", "retracts", "challenges"):
                target = getattr(a, field)
                if target is not None and target not in ids:
                    raise ValueError(f"assertion `{a.id}`: `{field}` names unknown id `{target}`")
            for target in a.derived_from:
                if target not in ids:
                    raise ValueError(
                        f"assertion `{a.id}`: `derived_from` names unknown id `{target}`"
                    )
        for q in self.queries:
            named = [c.ids for c in q.checks for c in c.flat() if c.kind is CheckKind.conflict]
            for group in [*named, *q.acceptable_conflicts]:
                missing = [i for i in group if i not in ids]
                if missing:
                    raise ValueError(f"query `{q.text}`: a conflict names unknown ids {missing}")
        return self

    @field_validator("now")
    @classmethod
    def _aware_now(cls, value: datetime | None) -> datetime | None:
        return utc(value)

    @property
    def evaluation_time(self) -> datetime:
        return self.now or DEFAULT_NOW
