"""Engines by name: the one place a name on the command line becomes an `Engine`."""

from __future__ import annotations

from collections.abc import Callable

from memeval.engines.base import Engine
from memeval.engines.naive import NaiveEngine
from memeval.engines.reference import ReferenceEngine
from memeval.errors import UsageError

_FACTORIES: dict[str, Callable[[], Engine]] = {
    "reference": ReferenceEngine,
    "naive": NaiveEngine,
}


def known() -> list[str]:
    return sorted(_FACTORIES)


def create(name: str) -> Engine:
    """A fresh engine; each call gets its own state, so runs never share memory."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UsageError(f"unknown engine `{name}`", fix=f"use one of: {', '.join(known())}")
    return factory()
