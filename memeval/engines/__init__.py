"""Engines: the contract every memory system is measured through, and the ones memeval ships.

This is an engine author's front door: subclass `Engine`, list what it can do in
`capabilities`, and raise the errors below for what is not a memory failure (their tree, and
what the runner does with each, is in `memeval.errors`). Everything here is
re-exported from the modules that define it, so `from memeval.engines import Engine` stays the
one import an author needs while the modules stay free to move.
"""

from memeval.clock import now
from memeval.engines.base import Engine
from memeval.engines.types import (
    Assertion,
    Belief,
    BeliefReport,
    Capability,
    ConflictReport,
    Derived,
    Hit,
    HitSpan,
    MemoryItem,
    Pack,
    QueryResult,
    ToolCallRef,
    Turn,
    TurnContext,
    Usage,
)
from memeval.errors import CreditsExhausted, EngineRefused, EngineUnavailable, Unsupported

__all__ = [
    "Assertion",
    "Belief",
    "BeliefReport",
    "Capability",
    "ConflictReport",
    "CreditsExhausted",
    "Derived",
    "Engine",
    "EngineRefused",
    "EngineUnavailable",
    "Hit",
    "HitSpan",
    "MemoryItem",
    "Pack",
    "QueryResult",
    "ToolCallRef",
    "Turn",
    "TurnContext",
    "Unsupported",
    "Usage",
    "now",
]
