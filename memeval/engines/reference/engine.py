"""`reference`: memeval's embedded engine, in process and in memory.

Each tenant owns its own stores, indexes and graph, and no code path reads across tenants, so
isolation does not depend on filtering. Calls never await anything, so each runs to completion
and a write is visible to the next call at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from memeval import clock
from memeval.engines.base import Engine
from memeval.engines.reference import packs
from memeval.engines.reference.beliefs import BeliefRecord
from memeval.engines.reference.facts import FactStore, View
from memeval.engines.reference.graph import Graph
from memeval.engines.reference.memory import Memory, key_of
from memeval.engines.reference.retrieval import Retriever
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
)


@dataclass
class Tenant:
    facts: FactStore = field(default_factory=FactStore)
    graph: Graph = field(default_factory=Graph)
    memory: Memory = field(default_factory=Memory)
    beliefs: list[BeliefRecord] = field(default_factory=list)
    written: dict[str, None] = field(default_factory=dict)  # assertion ids, in write order


class ReferenceEngine(Engine):
    name = "reference"
    capabilities = frozenset(
        {
            Capability.store,
            Capability.query_at,
            Capability.conflicts,
            Capability.abstain,
            Capability.provenance,
            Capability.spans,
            Capability.derivation,
            Capability.lifecycle,
            Capability.context_doc,
            Capability.beliefs,
            Capability.inspect,
        }
    )

    def __init__(self) -> None:
        self._tenants: dict[str, Tenant] = {}

    def _tenant(self, tenant: str) -> Tenant:
        state = self._tenants.get(tenant)
        if state is None:
            state = self._tenants[tenant] = Tenant()
        return state

    def _peek(self, tenant: str) -> Tenant:
        """Reads never create a tenant, so asking an unknown one leaves no trace."""
        return self._tenants.get(tenant) or Tenant()

    # ---- fixture face -------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        state = self._tenant(tenant)
        fact = state.facts.add(assertion)
        state.graph.add(fact)
        state.written.setdefault(assertion.id)

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        return self._answer(tenant, text, clock.now(), k)

    async def query_at(self, tenant: str, text: str, as_of: datetime, k: int = 5) -> QueryResult:
        return self._answer(tenant, text, _aware(as_of), k)

    def _answer(self, tenant: str, text: str, at: datetime, k: int) -> QueryResult:
        state = self._peek(tenant)
        retriever = Retriever(state.facts, state.graph, View(state.facts, at))
        return retriever.answer(text, k)

    async def conflicts(self, tenant: str, assertion_id: str) -> list[ConflictReport]:
        view = View(self._peek(tenant).facts, clock.now())
        return [
            ConflictReport(ids=list(c.ids), resolved_to=c.resolved_to, reason=c.reason)
            for c in view.conflicts_of(assertion_id)
        ]

    async def reset(self, tenant: str) -> None:
        self._tenants.pop(tenant, None)

    # ---- lifecycle face -----------------------------------------------------------------

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        return self._tenant(tenant).memory.ingest(item)

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        memory = self._tenant(tenant).memory
        if ctx.log:
            memory.log_turn(ctx.agent, ctx.thread, ctx.turn)
        request = packs.Request(
            title="Context for the reply",
            agent=ctx.agent,
            thread=ctx.thread,
            query=ctx.turn.text,
            exclude={key_of(t) for t in [*ctx.in_prompt, ctx.turn]},
        )
        return packs.build(memory, request)

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        return self._tenant(tenant).memory.log_turn(agent, thread, turn)

    async def write_history(
        self, tenant: str, agent: str, thread: str, turns: list[Turn]
    ) -> list[str]:
        memory = self._tenant(tenant).memory
        return [memory.log_turn(agent, thread, turn) for turn in turns]

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        if focus:
            title, weights = f"Session start: {focus}", packs.BROAD
        else:
            title, weights = "Session start", packs.COLD
        if thread:
            title = f"Resuming thread {thread}" + (f": {focus}" if focus else "")
        request = packs.Request(title, agent, thread=thread, query=focus, weights=weights)
        return packs.build(self._peek(tenant).memory, request)

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        request = packs.Request(
            title="Carried over from the compacted turns",
            agent=agent,
            thread=thread,
            query=" ".join(t.text for t in dropped),
            carry=dropped,
        )
        return packs.build(self._peek(tenant).memory, request)

    async def compile_context(
        self, tenant: str, agent: str, heading: str, at: datetime, question: str | None = None
    ) -> Pack:
        request = packs.Request(heading, agent, query=heading, weights=packs.BROAD)
        return packs.build(self._peek(tenant).memory, request)

    async def build_beliefs(self, tenant: str) -> BeliefReport:
        state = self._tenant(tenant)
        state.beliefs = state.memory.book.records()
        state.memory.retire_beliefs()
        for record in state.beliefs:
            origins = list(dict.fromkeys(st.origin for st in record.statements))
            state.memory.add_belief(record.bullet(), record.latest.at, origins)
        beliefs = [record.to_belief() for record in state.beliefs]
        return BeliefReport(beliefs=beliefs, built=len(beliefs))

    async def list(self, tenant: str) -> list[str]:
        state = self._peek(tenant)
        return [*dict.fromkeys([*state.memory.written, *state.written])]

    async def forget(self, tenant: str) -> None:
        self._tenants.pop(tenant, None)

    async def inspect(self, tenant: str) -> Derived:
        state = self._peek(tenant)
        return Derived(
            facts=[f"{st.slot}: {st.value}" for st in state.memory.book.statements()],
            beliefs=[record.describe() for record in state.beliefs],
        )


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
