"""Types shared by both suite kinds."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints, WithJsonSchema

Slug = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", min_length=1, max_length=80),
]
"""An id that is safe in a case id, a tenant name and a URL path."""

_TAG = re.compile(r"^[a-z0-9][a-z0-9_.:\-]{0,79}$")


def _tag(value: str) -> str:
    if not _TAG.match(value):
        raise ValueError(
            f"tag {value!r} must be lower case letters, digits and `_ . : -` (at most 80), "
            "starting with a letter or digit, e.g. `category:multi-hop`"
        )
    return value


Tag = Annotated[
    str,
    AfterValidator(_tag),
    WithJsonSchema({"type": "string", "pattern": _TAG.pattern, "maxLength": 80}),
]
"""A probe or query tag such as `category:multi-hop` or `difficulty:hard`; reports group by it."""

DEFAULT_NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
"""The evaluation time of a case that names none, in it or in its suite: fixed, never the wall
clock, so a suite scores the same next year."""

FIRST_YEAR, LAST_YEAR = 2, 8999
"""The years a suite's dates may name. Python's dates end at 9999 and begin at year 1; keeping
a millennium clear above (and a year below) leaves room for everything the runner adds (days
after `start`, minutes between turns, a day after the last write) and for any zone offset."""
MAX_DAY = 36_525
"""A `day` offset of at most a hundred years."""
MAX_QUESTION = 2_000
"""Characters in a question, a query, a focus or a heading: twenty times the longest shipped
one. The reference engine's query time grows faster than the query (a 74,000-character fixture
query took 31 s), and a question is a sentence or two."""


def in_years(value: T) -> T:
    """`value` (a date or datetime) if memeval can compute with it, else a ValueError saying so."""
    if isinstance(value, date) and not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise ValueError(
            f"{value.isoformat()} is outside the years {FIRST_YEAR} to {LAST_YEAR} that "
            f"memeval computes with; use a date from {FIRST_YEAR:04d}-01-01 to {LAST_YEAR}-12-31"
        )
    return value


T = TypeVar("T")


class Match(StrEnum):
    """How a check's string is found in a text; every mode ignores case.

    `substring` anywhere; `word` only where the string's edges are not glued to more letters or
    digits; `number` as `word` at a letter edge, while a digit edge must not run on into more
    digits or into a decimal or group separator and a digit (`4.1` is not in `0.4.1`, `£9` is
    not in `£95` nor in `£9.50`, `4.1` is in `v4.1`)."""

    substring = "substring"
    word = "word"
    number = "number"


class Strict(BaseModel):
    """Suite models reject unknown fields: a typo in a user's YAML is an error, not ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def check_unique(items: Sequence[T], attr: str = "id") -> Sequence[T]:
    """Reject repeated ids: results are keyed by them, so a repeat would hide one item."""
    seen: set[Any] = set()
    for item in items:
        key = getattr(item, attr)
        if key in seen:
            raise ValueError(f"duplicate id `{key}`; every {attr} in a list must be unique")
        seen.add(key)
    return items
