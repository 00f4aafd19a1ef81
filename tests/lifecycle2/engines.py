"""Small engines that each get one lifecycle duty right or wrong, served over memeval's own
HTTP protocol and driven through the `http` adapter, so every lifecycle-2 measure is shown to
fail an engine that deserves it, across a real wire.

`Tiny` is a plain, correct in-memory engine: writes kept per tenant, packs ranked by shared
words, forget (whole tenant or one write) honoured at once, the injected-context block
stripped from every write. Each subclass breaks exactly one of those duties.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pydantic import SecretStr

from memeval.engines.base import Engine
from memeval.engines.registry import create
from memeval.engines.types import (
    BeliefReport,
    Capability,
    Derived,
    MemoryItem,
    Pack,
    Turn,
    TurnContext,
)
from memeval.server import create_app
from tests.adapters.fakes import running

TOKEN = "lifecycle-2-token"
WORD = re.compile(r"[a-z0-9]+")
INJECTED = re.compile(r"<memory-context>.*?</memory-context>", re.S)


@dataclass
class Write:
    id: str
    text: str


@dataclass
class Tenant:
    writes: list[Write] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if len(w) > 2}


class Tiny(Engine):
    name = "tiny"
    capabilities = frozenset(
        {Capability.lifecycle, Capability.inspect, Capability.forget_write, Capability.beliefs}
    )

    line_chars = 400
    """A pack line's budget, as any engine's pack has one."""

    def __init__(self) -> None:
        self.tenants: dict[str, Tenant] = {}

    def _t(self, tenant: str) -> Tenant:
        return self.tenants.setdefault(tenant, Tenant())

    def keep(self, text: str) -> str:
        """What is stored of a write: the host's injected block is never memory."""
        return INJECTED.sub("", text).strip()

    async def _write(self, tenant: str, write_id: str, text: str) -> str:
        kept = self.keep(text)
        self._t(tenant).writes.append(Write(write_id, kept))
        return write_id

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        return await self._write(tenant, item.id, f"{item.title} {item.text}")

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        return await self._write(
            tenant, turn.id or f"{thread}-{len(self._t(tenant).writes)}", turn.text
        )

    def recall(self, tenant: str, text: str) -> Pack:
        asked = _words(text)
        scored = [(len(asked & _words(w.text)), i, w) for i, w in enumerate(self._t(tenant).writes)]
        best = [w for s, _, w in sorted(scored, key=lambda x: (-x[0], x[1])) if s][:8]
        lines = [w.text.replace("\n", " ")[: self.line_chars] for w in best]
        body = "\n".join(f"- {line}" for line in lines)
        return Pack(
            markdown=f"# Memory\n\n## Recalled\n\n{body}\n", unit_ids=[[w.id] for w in best]
        )

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        pack = self.recall(tenant, ctx.turn.text)
        if ctx.log:
            await self._write(tenant, ctx.turn.id or f"{ctx.thread}-u", ctx.turn.text)
        return pack

    async def start_session(self, tenant, agent, thread, focus, at, question=None) -> Pack:  # type: ignore[no-untyped-def]
        return self.recall(tenant, f"{focus or ''} {question or ''}")

    async def compile_context(self, tenant, agent, heading, at, question=None) -> Pack:  # type: ignore[no-untyped-def]
        return self.recall(tenant, f"{heading} {question or ''}")

    async def build_beliefs(self, tenant: str) -> BeliefReport:
        t = self._t(tenant)
        t.derived = [w.text for w in t.writes]
        return BeliefReport(built=len(t.derived))

    async def inspect(self, tenant: str) -> Derived:
        return Derived(facts=list(self._t(tenant).derived))

    async def list(self, tenant: str) -> list[str]:
        return [w.id for w in self._t(tenant).writes]

    async def forget(self, tenant: str) -> None:
        self.tenants.pop(tenant, None)

    async def forget_write(self, tenant: str, write_id: str) -> None:
        t = self._t(tenant)
        t.writes = [w for w in t.writes if w.id != write_id]
        t.derived = [w.text for w in t.writes] if t.derived else []


class KeepsAfterForget(Tiny):
    """Forgets the listing, not the memory: a tombstone that hides ids while packs still recall."""

    name = "keeps-after-forget"

    def __init__(self) -> None:
        super().__init__()
        self.hidden: dict[str, Tenant] = {}

    async def forget(self, tenant: str) -> None:
        self.hidden[tenant] = self.tenants.pop(tenant, Tenant())

    def recall(self, tenant: str, text: str) -> Pack:
        t = self._t(tenant)
        live, t.writes = t.writes, [*self.hidden.get(tenant, Tenant()).writes, *t.writes]
        try:
            return super().recall(tenant, text)
        finally:
            t.writes = live


class KeepsDerived(Tiny):
    """Forgets one write but keeps the facts it distilled from it."""

    name = "keeps-derived"

    async def forget_write(self, tenant: str, write_id: str) -> None:
        t = self._t(tenant)
        t.writes = [w for w in t.writes if w.id != write_id]


class StoresInjected(Tiny):
    """Stores every write as sent, the host's injected memory block included."""

    name = "stores-injected"

    def keep(self, text: str) -> str:
        return text.strip()


class SlowPack(Tiny):
    """Answers every pre-turn recall after `delay` seconds."""

    name = "slow-pack"
    delay = 0.4

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        await asyncio.sleep(self.delay)
        return await super().pre_turn(tenant, ctx)


class LateIndex(Tiny):
    """Acknowledges a document at once but ranks it only `delay` seconds later, as an engine
    that indexes in the background does; the listing shows it at once."""

    name = "late-index"
    delay = 0.5

    def __init__(self) -> None:
        super().__init__()
        self.ready: dict[str, float] = {}

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        self.ready[item.id] = asyncio.get_running_loop().time() + self.delay
        return await super().ingest(tenant, item)

    def recall(self, tenant: str, text: str) -> Pack:
        now = asyncio.get_running_loop().time()
        t = self._t(tenant)
        shown = [w for w in t.writes if self.ready.get(w.id, 0.0) <= now]
        full, t.writes = t.writes, shown
        try:
            return super().recall(tenant, text)
        finally:
            t.writes = full


@contextmanager
def served(engine: Engine) -> Iterator[Engine]:
    """`engine` behind memeval's HTTP server on 127.0.0.1, as the `http` adapter sees it (the
    caller sets `MEMEVAL_HTTP_TOKEN` to `TOKEN`)."""
    with running(create_app(engine, SecretStr(TOKEN))) as url:
        yield create(f"http?url={url}&timeout=10&retries=1&backoff=0.01")


class RecentOnly(Tiny):
    """Keeps only its `window` latest writes: a needle buried under later chatter is lost."""

    name = "recent-only"
    window = 60

    async def _write(self, tenant: str, write_id: str, text: str) -> str:
        await super()._write(tenant, write_id, text)
        t = self._t(tenant)
        t.writes = t.writes[-self.window :]
        return write_id

    async def list(self, tenant: str) -> list[str]:
        """Counts what it was given, so settling does not wait for what it dropped."""
        return [f"w{i}" for i in range(self.given.get(tenant, 0))]

    def __init__(self) -> None:
        super().__init__()
        self.given: dict[str, int] = {}

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        self.given[tenant] = self.given.get(tenant, 0) + 1
        return await super().ingest(tenant, item)

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        self.given[tenant] = self.given.get(tenant, 0) + 1
        return await super().post_turn(tenant, agent, thread, turn)

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        if ctx.log:
            self.given[tenant] = self.given.get(tenant, 0) + 1
        return await super().pre_turn(tenant, ctx)


class FirstImpressions(RecentOnly):
    """Keeps only its first `window` writes: whatever a conversation turned into later is lost."""

    name = "first-impressions"
    window = 6

    async def _write(self, tenant: str, write_id: str, text: str) -> str:
        t = self._t(tenant)
        if len(t.writes) < self.window:
            t.writes.append(Write(write_id, self.keep(text)))
        return write_id
