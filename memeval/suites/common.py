"""Types shared by both suite kinds."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
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
