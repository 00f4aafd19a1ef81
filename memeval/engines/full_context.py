"""`full-context`: the floor every memory must be measured against, the whole history itself.

Published tables put a memory system beside the same model given the full conversation; this
engine is that row. It keeps every write in time order and hands the whole of it back as the
pack, up to a token cap: past the cap the oldest writes are left out and the pack's heading
says how many, so a report never mistakes a truncated history for a full one. It does no
retrieval at all, which is the point: accuracy bought with a pack this size is what a memory
system's smaller pack is compared with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from memeval.engines.base import Engine
from memeval.engines.pack import CHARS_PER_TOKEN, tokens, turn_bullet
from memeval.engines.types import Capability, MemoryItem, Pack, Turn, TurnContext

MAX_TOKENS = 128_000
"""The default cap: what today's long-context models read; a LoCoMo conversation fits."""
TRUNCATED = "Truncated"


@dataclass(frozen=True)
class Entry:
    id: str
    at: datetime | None
    line: str
    order: int


@dataclass
class History:
    entries: list[Entry] = field(default_factory=list)

    def add(self, write_id: str, at: datetime | None, line: str) -> str:
        self.entries.append(Entry(write_id, at, line, len(self.entries)))
        return write_id

    def in_order(self) -> list[Entry]:
        """By time, writes without one where they came; ties keep the order written."""
        dated = [e.at for e in self.entries if e.at is not None]
        floor = min(dated) if dated else None
        return sorted(self.entries, key=lambda e: (e.at or floor or datetime.min, e.order))


class FullContextEngine(Engine):
    name = "full-context"
    capabilities = frozenset({Capability.lifecycle, Capability.context_doc})
    verified_against = "not a memory: the whole history, for comparison"

    def __init__(self, max_tokens: int = MAX_TOKENS) -> None:
        self.max_tokens = max_tokens
        self._tenants: dict[str, History] = {}

    def _history(self, tenant: str) -> History:
        return self._tenants.setdefault(tenant, History())

    def selected(self, tenant: str) -> list[Entry]:
        """What the pack may hold, oldest first: here everything."""
        return self._history(tenant).in_order()

    def pack(self, tenant: str, title: str) -> Pack:
        entries = self.selected(tenant)
        lines = [f"- {' '.join(e.line.split())}" for e in entries]
        room = self.max_tokens * CHARS_PER_TOKEN - len(title) - 64
        kept = len(lines)
        used = sum(len(line) + 1 for line in lines)
        while kept and used > room:  # the oldest go first
            used -= len(lines[len(lines) - kept]) + 1
            kept -= 1
        dropped = len(lines) - kept
        head = [f"# {title}", ""]
        if dropped:
            head += [
                f"## {TRUNCATED}: the {dropped} oldest of {len(lines)} writes are left out "
                f"(cap {self.max_tokens} tokens)",
                "",
            ]
        body = lines[dropped:]
        markdown = "\n".join([*head, "## History", "", *body]) + "\n"
        return Pack(
            markdown=markdown,
            tokens=tokens(markdown),
            abstained=not body,
            unit_ids=[[e.id] for e in entries[dropped:]],
        )

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        text = f"{item.title}: {item.text}" if item.title else item.text
        return self._history(tenant).add(item.id, item.at, turn_bullet(item.kind, item.at, text))

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        pack = self.pack(tenant, "The whole history")
        if ctx.log:
            await self.post_turn(tenant, ctx.agent, ctx.thread, ctx.turn)
        return pack

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        history = self._history(tenant)
        write_id = turn.id or f"{thread}#{len(history.entries) + 1}"
        who = turn.speaker or turn.role
        return history.add(write_id, turn.at, turn_bullet(who, turn.at, turn.text))

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        return self.pack(tenant, "The whole history")

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        return self.pack(tenant, "The whole history")

    async def compile_context(
        self, tenant: str, agent: str, heading: str, at: datetime, question: str | None = None
    ) -> Pack:
        return self.pack(tenant, heading)

    async def list(self, tenant: str) -> list[str]:
        return [e.id for e in self._history(tenant).entries]

    async def forget(self, tenant: str) -> None:
        self._tenants.pop(tenant, None)
