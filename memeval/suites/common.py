"""Types shared by both suite kinds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, StringConstraints

Slug = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", min_length=1, max_length=80),
]
"""An id that is safe in a case id, a tenant name and a URL path."""

T = TypeVar("T")


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
