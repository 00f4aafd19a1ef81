"""The engine protocol: one async interface with a fixture face and a lifecycle face.

Every call names a tenant, and an engine must never let one tenant see another's data. A method
an engine does not implement raises `Unsupported`, which the runner records as *unsupported*
rather than as a wrong answer.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from datetime import datetime
from inspect import Parameter, signature
from typing import Any

from memeval.engines import idempotency
from memeval.engines.types import (
    Assertion,
    BeliefReport,
    Capability,
    ConflictReport,
    Derived,
    MemoryItem,
    Pack,
    QueryResult,
    Turn,
    TurnContext,
    Usage,
)
from memeval.errors import Unsupported

ASKED = ("start_session", "compile_context")
"""The calls that gained `question` after engines were written against them."""


class Engine:
    """Base class for engines; override what you support and list it in `capabilities`."""

    name: str = "engine"
    capabilities: frozenset[Capability] = frozenset()
    verified_against: str = "memeval's own tests"
    """What this engine's wire was proven against (a vendor SDK and version, or "published
    docs only"), shown by `memeval engines` so a user knows how far to trust an adapter."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every caller passes `question=` to every engine, so an override written before it
        joined `start_session`/`compile_context` is adapted here, once per class: wrapped to
        accept and drop it, with a `DeprecationWarning` asking its author to add it."""
        super().__init_subclass__(**kwargs)
        for name in ASKED:
            method = cls.__dict__.get(name)
            if method is None or _takes_question(method):
                continue
            warnings.warn(
                f"{cls.__module__}.{cls.__qualname__}.{name} does not accept "
                "`question: str | None = None`; memeval drops the question for it, and will "
                "stop doing so in a later release: add the parameter",
                DeprecationWarning,
                stacklevel=2,
            )
            setattr(cls, name, _without_question(method))

    def supports(self, capability: Capability) -> bool:
        return capability in self.capabilities

    async def close(self) -> None:
        """Release connections; called once when the worker is done with the engine."""

    async def preflight(self) -> None:
        """Called once before any case is dispatched: prove the engine is reachable, accepts
        its key and speaks a protocol version we understand. One bad setting must fail the run
        in seconds with a message naming the fix, not every case slowly. Raise a
        `MemevalError` (for example `AuthRejected`) or `EngineUnavailable`; the default, for
        in-process engines, has nothing to check."""

    # ---- fixture face ------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        raise Unsupported(Capability.store)

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        raise Unsupported(Capability.store)

    async def query_at(self, tenant: str, text: str, as_of: datetime, k: int = 5) -> QueryResult:
        raise Unsupported(Capability.query_at)

    async def conflicts(self, tenant: str, assertion_id: str) -> list[ConflictReport]:
        raise Unsupported(Capability.conflicts)

    async def reset(self, tenant: str) -> None:
        raise Unsupported(Capability.store)

    # ---- lifecycle face ----------------------------------------------------------------

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        """Store a document or learning; returns the id `list` will show once it is visible."""
        raise Unsupported(Capability.lifecycle)

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        """Log the user's turn and recall a pack for the reply."""
        raise Unsupported(Capability.lifecycle)

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        """Log the agent's reply; returns the id `list` will show once it is visible."""
        raise Unsupported(Capability.lifecycle)

    async def write_history(
        self, tenant: str, agent: str, thread: str, turns: list[Turn]
    ) -> list[str]:
        """Load past turns (any role, any speaker) in one call, recalling nothing: a long
        history costs writes, not a pack per turn. Returns the ids `list` will show. The
        default logs each turn through `post_turn`, each under its own write key (see
        `idempotency.part`); engines with a bulk path override it."""
        ids = []
        for index, turn in enumerate(turns):
            with idempotency.part(index):
                ids.append(await self.post_turn(tenant, agent, thread, turn))
        return ids

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        """A pack for a session that starts (or resumes `thread`); no thread nor focus = cold.
        `question`, when given, is what the user asks first: every caller passes it, so an
        engine that has no use for it still accepts it (and may ignore it)."""
        raise Unsupported(Capability.lifecycle)

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        """What must survive when `dropped` turns leave the prompt."""
        raise Unsupported(Capability.lifecycle)

    async def compile_context(
        self, tenant: str, agent: str, heading: str, at: datetime, question: str | None = None
    ) -> Pack:
        """A context document about one heading; `question` as for `start_session`."""
        raise Unsupported(Capability.context_doc)

    async def build_beliefs(self, tenant: str) -> BeliefReport:
        raise Unsupported(Capability.beliefs)

    async def list(self, tenant: str) -> list[str]:
        """Ids of every visible write, so a run can wait until its writes have settled."""
        raise Unsupported(Capability.lifecycle)

    async def forget(self, tenant: str) -> None:
        raise Unsupported(Capability.lifecycle)

    async def forget_write(self, tenant: str, write_id: str) -> None:
        """Forget one write, named by the id the case gave it (`MemoryItem.id`, `Turn.id`),
        and everything derived from it alone: a user's "delete that" must not wait for the
        whole tenant to go. Engines that can only forget a tenant leave this unsupported,
        and the erase audit and probe clean-up say so in the report."""
        raise Unsupported(Capability.forget_write)

    async def inspect(self, tenant: str) -> Derived:
        raise Unsupported(Capability.inspect)

    async def usage(self) -> Usage:
        """Running totals since the engine's account began, never a delta: the runner reads
        them around each case, and only totals survive cases sharing the engine."""
        raise Unsupported(Capability.usage)


def _takes_question(method: Callable[..., Awaitable[Pack]]) -> bool:
    try:
        params = signature(method).parameters.values()
    except (TypeError, ValueError):  # no signature to read: assume the old one
        return False
    return any(p.name == "question" or p.kind is Parameter.VAR_KEYWORD for p in params)


def _without_question(method: Callable[..., Awaitable[Pack]]) -> Callable[..., Awaitable[Pack]]:
    async def dropping(self: Engine, *args: Any, question: str | None = None, **kw: Any) -> Pack:
        return await method(self, *args, **kw)

    dropping.__name__, dropping.__qualname__ = method.__name__, method.__qualname__
    dropping.__doc__ = method.__doc__
    return dropping
