"""`cortex`: CortexDB over its v1 wire (bodies and assumptions in `cortex_wire`).

- Tenants map to scopes: `{scope_prefix}/{tenant}`.
- The key is a bearer from `CORTEX_API_KEY`; the actor learned from `GET v1/auth/whoami`
  rides on every later call as `X-Cortex-Actor`.
- Every write carries an `Idempotency-Key` header (and each bulk item its own key), so a
  request retried after a timeout is stored once.
- The fixture face must read its writes back at once, so `store` buffers assertions and the
  next read flushes them with one `v1/experience/bulk?wait=indexed`. Lifecycle writes go to
  `v1/experience` unwaited, and `list` pages `v1/events` until they are indexed: that is what
  settles a run.
- Before a belief build, the enrichment backlog in `v1/admin/usage` is polled until it reads
  0 twice in a row, for at most `enrich_wait` seconds, because beliefs built before fact
  extraction ends are built from nothing. The jobs the writes handed back are then replayed
  with one build over the tenant's whole scope.
- `usage` is `v1/admin/usage`'s running totals; the runner reads them around every case and a
  run's cost is the union of those windows (`memeval.scoring.spend`).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from datetime import datetime
from time import monotonic
from typing import Any, ClassVar

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from memeval.engines.adapters import cortex_wire as w
from memeval.engines.adapters.packs import pack_of
from memeval.engines.adapters.remote import RemoteEngine, idempotency_key, parse
from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.base import EngineUnavailable
from memeval.engines.pack import tokens as count_tokens
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

PACK_K = 12


class CortexSettings(EngineSettings):
    model_config = SettingsConfigDict(env_prefix="CORTEX_")
    engine = "cortex"
    url: str = Field(default="http://127.0.0.1:3141", description="CortexDB's base URL.")
    api_key: SecretStr = Field(description="CortexDB's bearer key.")
    enrich_wait: float = Field(
        default=600.0, ge=0, description="Most seconds to wait for enrichment to drain."
    )
    scope_prefix: str = Field(default="memeval", description="Scopes are PREFIX/tenant.")


class CortexEngine(RemoteEngine):
    name = "cortex"
    settings_model = CortexSettings
    capabilities = frozenset(
        {
            Capability.store,
            Capability.query_at,
            Capability.conflicts,
            Capability.abstain,
            Capability.provenance,
            Capability.lifecycle,
            Capability.context_doc,
            Capability.beliefs,
            Capability.inspect,
            Capability.usage,
        }
    )
    routes: ClassVar[str] = "/v1/"

    def __init__(self, settings: CortexSettings) -> None:
        super().__init__(settings)
        self.cortex = settings
        self.version = "unknown"
        self._pending: dict[str, list[w.Experience]] = defaultdict(list)
        self._jobs: dict[str, list[str]] = defaultdict(list)
        self._cursor: dict[str, str | None] = {}
        self._seen: dict[str, dict[str, None]] = defaultdict(dict)
        self.last_write: dict[str, float] = {}  # scope -> monotonic time of its last write

    def scope(self, tenant: str) -> str:
        return f"{self.cortex.scope_prefix}/{tenant}"

    async def _get(self, route: str, **params: Any) -> Any:
        await self.ready()
        return await self._read(route, **params)

    async def _read(self, route: str, **params: Any) -> Any:
        return await self.fetch("GET", self.routes + route, params=params or None)

    async def _post(self, route: str, body: Any, **params: Any) -> Any:
        """Every POST is a write or an action: each gets its own idempotency key."""
        return await self.request(
            "POST",
            self.routes + route,
            json=body,
            params=params or None,
            headers={"Idempotency-Key": idempotency_key()},
        )

    async def connect(self) -> None:
        actor = parse(w.Actor, await self._read("auth/whoami"), self.name)
        self.transport.headers["X-Cortex-Actor"] = actor.actor
        health = parse(w.Health, await self._read("admin/health"), self.name)
        if health.status.lower() not in ("ok", "healthy", "ready"):
            raise EngineUnavailable(f"cortex reports health `{health.status}`")
        self.version = parse(w.Version, await self._read("admin/version"), self.name).version

    async def _backlog(self) -> _Reading:
        return _Reading(await self._get("admin/usage"), self.name)

    # ---- writes -------------------------------------------------------------------------

    async def _write(self, experience: w.Experience) -> str:
        data = await self._post("experience", experience.body())
        written = parse(w.Written, data, self.name)
        self._jobs[experience.scope] += written.jobs
        self.last_write[experience.scope] = monotonic()
        return written.id

    async def _flush(self, tenant: str) -> None:
        """Buffered assertions, in one bulk write that returns once they are searchable."""
        items = self._pending.pop(tenant, [])
        if not items:
            return
        keyed = [i.model_copy(update={"idempotency_key": idempotency_key()}) for i in items]
        body = w.Bulk(items=keyed)
        data = await self._post("experience/bulk", body.body(), wait="indexed")
        for written in parse(w.BulkWritten, data, self.name).items:
            self._jobs[self.scope(tenant)] += written.jobs
        self.last_write[self.scope(tenant)] = monotonic()

    def _turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> w.Experience:
        return w.Experience(
            scope=self.scope(tenant),
            kind="turn",
            text=turn.text,
            agent=agent,
            thread=thread,
            role=turn.role,
            at=turn.at,
            tool_calls=turn.tool_calls,
        )

    # ---- reads --------------------------------------------------------------------------

    async def _recall(self, request: w.RecallRequest) -> w.Recalled:
        return parse(w.Recalled, await self._post("recall", request.body()), self.name)

    async def _pack(self, title: str, request: w.RecallRequest) -> Pack:
        recalled = await self._recall(request)
        if recalled.markdown:
            return Pack(
                markdown=recalled.markdown,
                tokens=recalled.tokens or count_tokens(recalled.markdown),
            )
        return pack_of(title, [item.text for item in recalled.items])

    async def _query(self, tenant: str, text: str, as_of: datetime | None, k: int) -> QueryResult:
        await self._flush(tenant)
        recalled = await self._recall(
            w.RecallRequest(scope=self.scope(tenant), query=text, k=k, purpose="query", as_of=as_of)
        )
        return QueryResult(
            hits=[item.hit() for item in recalled.items],
            answer=recalled.answer,
            abstained=recalled.abstained,
            conflicts=[r for c in recalled.conflicts if (r := c.report()) is not None],
        )

    # ---- fixture face -------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        self._pending[tenant].append(
            w.Experience(
                scope=self.scope(tenant),
                kind="assertion",
                text=assertion.text,
                external_id=assertion.id,
                source=assertion.source,
                confidence=assertion.confidence,
                at=assertion.recorded_at or assertion.valid_from,
                fact=w.Fact(
                    subject=assertion.subject,
                    predicate=assertion.predicate,
                    object=assertion.object,
                    valid_from=assertion.valid_from,
                    valid_to=assertion.valid_to,
                    trust=assertion.trust.value,
                    exclusive=assertion.exclusive,
                    supersedes=assertion.supersedes,
                    retracts=assertion.retracts,
                    challenges=assertion.challenges,
                    derived_from=list(assertion.derived_from),
                    excerpt=assertion.excerpt,
                ),
            )
        )

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        return await self._query(tenant, text, None, k)

    async def query_at(self, tenant: str, text: str, as_of: datetime, k: int = 5) -> QueryResult:
        return await self._query(tenant, text, as_of, k)

    async def conflicts(self, tenant: str, assertion_id: str) -> list[ConflictReport]:
        await self._flush(tenant)
        data = await self._get("conflicts", scope=self.scope(tenant), external_id=assertion_id)
        found = parse(w.Conflicts, data, self.name).conflicts
        return [r for c in found if (r := c.report()) is not None]

    async def reset(self, tenant: str) -> None:
        self._pending.pop(tenant, None)
        await self.forget(tenant)

    # ---- lifecycle face -----------------------------------------------------------------

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        return await self._write(
            w.Experience(
                scope=self.scope(tenant),
                kind=item.kind,
                text=item.text,
                external_id=item.id,
                title=item.title or None,
                confidence=item.confidence,
                agent=item.agent,
                at=item.at,
            )
        )

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        """Recall first, then log the turn: the question must not answer itself."""
        pack = await self._pack(
            "Context for the reply",
            w.RecallRequest(
                scope=self.scope(tenant),
                query=ctx.turn.text,
                k=PACK_K,
                purpose="pre_turn",
                agent=ctx.agent,
                thread=ctx.thread,
                exclude=[
                    w.RecallTurn(role=t.role, text=t.text, at=t.at)
                    for t in [*ctx.in_prompt, ctx.turn]
                ],
            ),
        )
        await self._write(self._turn(tenant, ctx.agent, ctx.thread, ctx.turn))
        return pack

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        return await self._write(self._turn(tenant, agent, thread, turn))

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
    ) -> Pack:
        title = f"Resuming thread {thread}" if thread else "Session start"
        request = w.RecallRequest(
            scope=self.scope(tenant),
            query=focus or "",
            k=PACK_K,
            purpose="session_start",
            agent=agent,
            thread=thread,
            as_of=at,
        )
        return await self._pack(title + (f": {focus}" if focus else ""), request)

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        request = w.RecallRequest(
            scope=self.scope(tenant),
            query=" ".join(t.text for t in dropped),
            k=PACK_K,
            purpose="compaction",
            agent=agent,
            thread=thread,
        )
        return await self._pack("Carried over from the compacted turns", request)

    async def compile_context(self, tenant: str, agent: str, heading: str, at: datetime) -> Pack:
        request = w.RecallRequest(
            scope=self.scope(tenant),
            query=heading,
            k=PACK_K,
            purpose="context",
            agent=agent,
            heading=heading,
            as_of=at,
        )
        return await self._pack(heading, request)

    async def build_beliefs(self, tenant: str) -> BeliefReport:
        scope = self.scope(tenant)
        await self.wait_for_enrichment(scope)
        body = {"scope": scope, "jobs": self._jobs.pop(scope, [])}
        built = parse(w.Built, await self._post("beliefs/build", body), self.name)
        beliefs = [b.belief() for b in built.beliefs]
        return BeliefReport(beliefs=beliefs, built=built.built or len(beliefs))

    async def wait_for_enrichment(self, scope: str) -> None:
        """Until the backlog reads 0 twice in a row, or `enrich_wait` seconds have passed;
        polled about twenty times within the cap, at most once a second. The backlog is the
        whole server's, so `scope` (which `tinyhumans` needs) plays no part here."""
        deadline = monotonic() + self.cortex.enrich_wait
        poll = min(1.0, self.cortex.enrich_wait / 20)
        quiet = 0
        while quiet < 2 and monotonic() < deadline:
            pending = (await self._backlog()).pending
            quiet = quiet + 1 if pending == 0 else 0
            if quiet < 2:
                await asyncio.sleep(min(poll, max(0.0, deadline - monotonic())))

    async def list(self, tenant: str) -> list[str]:
        """Experience ids indexed so far, paging `v1/events` on from the last cursor."""
        scope, seen = self.scope(tenant), self._seen[tenant]
        while True:
            params: dict[str, Any] = {"scope": scope, "limit": 500}
            if self._cursor.get(tenant):
                params["cursor"] = self._cursor[tenant]
            page = parse(w.EventPage, await self._get("events", **params), self.name)
            for event in page.events:
                if event.type == w.INDEXED and event.experience_id:
                    seen.setdefault(event.experience_id)
            if page.next_cursor is None or page.next_cursor == self._cursor.get(tenant):
                break
            self._cursor[tenant] = page.next_cursor
        return [*seen]

    async def forget(self, tenant: str) -> None:
        scope = self.scope(tenant)
        await self._post("forget", {"scope": scope})
        self._jobs.pop(scope, None)
        self.last_write.pop(scope, None)
        self._cursor.pop(tenant, None)
        self._seen.pop(tenant, None)

    async def inspect(self, tenant: str) -> Derived:
        scope = self.scope(tenant)
        scopes = parse(w.Scopes, await self._get("scopes/list", prefix=scope), self.name).scopes
        derived = Derived()
        for each in scopes or [scope]:
            facts = parse(w.Facts, await self._get("facts", scope=each), self.name).facts
            beliefs = parse(w.Beliefs, await self._get("beliefs", scope=each), self.name).beliefs
            derived.facts += [f.describe() for f in facts]
            derived.beliefs += [b.describe() for b in beliefs]
        return derived

    async def usage(self) -> Usage:
        return (await self._backlog()).usage


class _Reading:
    """One read of `v1/admin/usage`: what was spent, and the enrichment backlog."""

    def __init__(self, data: Any, engine: str) -> None:
        raw = parse(w.AdminUsage, data, engine)
        self.usage = Usage(
            calls=raw.calls, tokens=raw.tokens, usd_micros=round(raw.cost_usd * 1_000_000)
        )
        self.pending = raw.enrichment.pending
