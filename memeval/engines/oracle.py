"""`oracle`: the ceiling, a pack holding exactly the writes the case names as evidence.

No memory can know which writes answer a question; this engine is told, by the runner, right
before each probe (`reveal`), and no other engine ever is. It shows what an answering model
does with perfect recall, so a report can set an engine between the floor (`full-context`
truncated, or nothing) and this. A probe that names no evidence gets an empty, abstaining
pack: the oracle row means something only on suites that name evidence.
"""

from __future__ import annotations

from memeval.engines.full_context import Entry, FullContextEngine


class OracleEngine(FullContextEngine):
    name = "oracle"
    verified_against = "not a memory: the evidence the case names, for comparison"

    def __init__(self, max_tokens: int | None = None) -> None:
        super().__init__(**({} if max_tokens is None else {"max_tokens": max_tokens}))
        self._evidence: dict[str, set[str]] = {}

    def reveal(self, tenant: str, write_ids: list[str]) -> None:
        """The writes that answer the next probe on `tenant` (engine-side ids)."""
        self._evidence[tenant] = set(write_ids)

    def selected(self, tenant: str) -> list[Entry]:
        wanted = self._evidence.get(tenant, set())
        return [e for e in super().selected(tenant) if e.id in wanted]

    async def forget(self, tenant: str) -> None:
        self._evidence.pop(tenant, None)
        await super().forget(tenant)
