"""Keeps credentials out of the store, which outlives runs and is read by whoever gets reports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SECRET_MARKERS = ("key", "token", "secret", "password")


def _is_secret(name: str) -> bool:
    lowered = name.lower()
    return any(marker in lowered for marker in SECRET_MARKERS)


def _scrub(value: Any) -> Any:
    if isinstance(value, Mapping):
        return scrub_secrets(value)
    if isinstance(value, list | tuple):
        return [_scrub(item) for item in value]
    return value


def scrub_secrets(options: Mapping[str, Any]) -> dict[str, Any]:
    """Drop every key naming a credential, at any depth.

    Matching is by substring and deliberately broad (`max_keys` goes too): a lost harmless
    option costs a line in a report, a stored API key costs a rotation.
    """
    return {name: _scrub(value) for name, value in options.items() if not _is_secret(str(name))}
