"""Pinned hashes of the published files, so a figure can say which data it was measured on."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel


class Pin(BaseModel):
    name: str  # the published file this hash belongs to
    sha256: str


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_pins(path: Path, pins: tuple[Pin, ...]) -> str | None:
    """None when the file is one of the pinned releases, else a warning naming both hashes.

    A mismatch is a warning, not an error: a user may run a corrected or trimmed copy on
    purpose, but its figures must not be read as the published benchmark's.
    """
    found = sha256_of(path)
    if any(pin.sha256 == found for pin in pins):
        return None
    pinned = ", ".join(f"{pin.sha256} ({pin.name})" for pin in pins)
    return (
        f"{path}: sha256 {found} is not the pinned {pinned}; "
        "figures from this copy are not comparable with the published benchmark's"
    )
