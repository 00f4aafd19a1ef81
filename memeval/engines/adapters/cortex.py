"""`cortex`: CortexDB over its v1 wire (bodies in `cortex_wire`, scopes in `cortex_scope`).

memeval keeps its own `Transport` rather than `cortexdbai.AsyncCortex`: the SDK's async client
has no `events`, `facts`, `beliefs`, `build_beliefs` or usage call, its async `recall` cannot
send `budgets`, `filters` or `temporal`, and it neither retries nor honours Retry-After or the
farm's shared back-off. The bodies are built to the SDK's own builders instead, and
`tests/adapters/test_cortex_contract.py` drives the SDK itself against the fake this adapter
is tested on, so the two cannot drift apart.

- A tenant is one scope, `{scope_prefix}/ws:{tenant}`, checked against the scope grammar
  before anything is sent.
- The key is a bearer (`CORTEX_API_KEY`), and every call carries `X-Cortex-Actor`, as the SDK
  sends it: `CORTEX_ACTOR` (default `user:default`, the SDK's) on `GET v1/auth/whoami`, then
  the `caller` whoami names. The vendor's CLI and connectors say a minted (PASETO/JWT) token
  is refused with 401 without an actor, or with one other than its `sub`: then the message
  names `CORTEX_ACTOR`. A server without the route (404) keeps the configured actor.
- `v1/admin/usage` is not in the SDK, and `cortexdb-mcp` says per-caller usage is not exposed
  on v1: a 403 or 404 there means "usage unknown" (cost shown as a dash, said once), never a
  rejected key, and preflight goes on without it; synthesis then cannot poll the backlog.
- A 402 can mean "not on your tier" (the CLI's reading) as well as "out of credit": on the
  optional belief build it is reported and the build skipped, not the run halted. A 408
  `WAIT_TIMEOUT` on `?wait=indexed` means the write is durable: the bulk settles on the
  listing instead of failing.
- Every write is one envelope whose body `idempotency_key` comes from the runner's write key
  (`memeval.engines.idempotency`), so a retried write replays instead of storing twice, and
  whose first label `mv:w:<digest>` is what `list` reports: the listing shows every event
  twice, so writes are counted by distinct label, not by rows.
- The fixture face must read its writes back at once: `store` buffers, and the next read
  flushes the buffer in one bulk with `?wait=indexed`. Lifecycle writes are not waited on;
  the run settles on `list`.
- `forget` lists the scope and removes its events by id, 100 at a time. A scope-wide forget
  would keep the idempotency keys for a day, and a case retried on the tenant would see its
  writes swallowed as replays.
- Synthesis follows TinyMemory's measured drain rule: poll `v1/admin/usage` every
  `enrich_poll` seconds until `jobs_pending` is 0 and `jobs_queued_total` has not moved for 4
  polls, at most `enrich_wait` seconds, then `POST v1/beliefs/build`. The backlog sits beside
  `jobs_pending` under `enrichment_backlog`, where TinyMemory's inspector reads it.
- `usage` is `v1/admin/usage`'s running `total`s.
- Not offered: conflict lookups (CortexDB's conflict queue names its own extracted records,
  never the writes memeval made, so no conflict can be tied to an assertion id) and spans.
  Provenance rides as a `mv:s:<source>` label, which the pack's events carry back.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import hashlib
import logging
import uuid
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from time import monotonic
from typing import Any, ClassVar

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from memeval.engines import idempotency
from memeval.engines.adapters import cortex_scope
from memeval.engines.adapters import cortex_wire as w
from memeval.engines.adapters.packs import BUDGET_TOKENS, RECALLED
from memeval.engines.adapters.remote import RemoteEngine, parse
from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.adapters.transport import RemoteError, vendor_code
from memeval.engines.pack import PACK_K, Section, render, turn_bullet
from memeval.engines.types import (
    Assertion,
    Belief,
    BeliefReport,
    Capability,
    Derived,
    Hit,
    MemoryItem,
    Pack,
    QueryResult,
    Turn,
    TurnContext,
    Usage,
)
from memeval.errors import AuthRejected, CreditsExhausted, EngineRefused, Unsupported

log = logging.getLogger(__name__)

ACTOR = "X-Cortex-Actor"
DERIVED_K = 4  # beliefs and facts a pack asks for beside its events
LISTING = 200
MAX_PAGES = 500
MAX_QUERY = 2000  # characters of a compaction's dropped turns sent as its query
DRAINED_POLLS = 4
WRITE_LABEL = "mv:w:"
SOURCE_LABEL = "mv:s:"
THREAD_LABEL = "mv:t:"
MAX_LABEL = 128
SINCE_EVER = "1970-01-01T00:00:00Z"
FIRST_POLL = 0.25
LAST_POLL = 2.0  # TinyHumans allows 300 requests a minute: back off while polling


def digest(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def label(tag: str, value: str) -> str | None:
    """`tag` + `value`, or None when the value cannot be a label: a label filter is split on
    commas, and a label's length is bounded."""
    text = tag + value
    return text if "," not in text and len(text) <= MAX_LABEL else None


class ScopedSettings(EngineSettings):
    """What both CortexDB wires need: a bearer, a scope prefix and an enrichment wait."""

    api_key: SecretStr = Field(description="CortexDB's bearer key.")
    enrich_wait: float = Field(
        default=600.0, ge=0, description="Most seconds to wait for enrichment to drain."
    )
    scope_prefix: str = Field(default="app:memeval", description="Scopes are PREFIX/ws:tenant.")

    @field_validator("scope_prefix")
    @classmethod
    def _scope_grammar(cls, value: str) -> str:
        return cortex_scope.check(value)


class CortexSettings(ScopedSettings):
    model_config = SettingsConfigDict(env_prefix="CORTEX_")
    engine = "cortex"
    url: str = Field(default="http://127.0.0.1:3141", description="CortexDB's base URL.")
    enrich_poll: float = Field(
        default=3.0, gt=0, description="Seconds between reads of the enrichment backlog."
    )
    actor: str = Field(
        default="user:default",
        min_length=1,
        description="X-Cortex-Actor sent to whoami (a minted token's `sub`); then the caller "
        "whoami names.",
    )


class CortexEngine(RemoteEngine):
    name = "cortex"
    settings_model: ClassVar[type[EngineSettings]] = CortexSettings  # TinyHumans' is a sibling
    verified_against = "cortexdbai 0.12.0 SDK"
    capabilities = frozenset(
        {
            Capability.store,
            Capability.query_at,
            Capability.abstain,
            Capability.provenance,
            Capability.lifecycle,
            Capability.context_doc,
            Capability.beliefs,
            Capability.inspect,
            Capability.usage,
        }
    )
    notes: ClassVar[tuple[str, ...]] = (
        "no conflict lookups: CortexDB's conflicts name its own records, not memeval's writes",
    )
    routes: ClassVar[str] = "/v1/"

    def __init__(self, settings: ScopedSettings) -> None:
        super().__init__(settings)
        self.cortex = settings
        self.version = "unknown"
        self._pending: dict[str, list[w.Envelope]] = defaultdict(list)
        self.last_write: dict[str, float] = {}  # scope -> monotonic time of its last write
        self._written: dict[str, set[str]] = defaultdict(set)  # scope -> write labels sent
        self.usage_known = True  # False once v1/admin/usage answered 403 or 404

    def scope(self, tenant: str) -> str:
        return cortex_scope.tenant_scope(self.cortex.scope_prefix, tenant)

    # ---- the wire -----------------------------------------------------------------------

    async def _read(self, route: str, **params: Any) -> Any:
        return await self.fetch("GET", self.routes + route, params=params or None)

    async def _get(self, route: str, **params: Any) -> Any:
        await self.ready()
        return await self._read(route, **params)

    async def _post(
        self, route: str, body: Any, headers: dict[str, str] | None = None, **params: Any
    ) -> Any:
        return await self.request(
            "POST", self.routes + route, json=body, params=params or None, headers=headers
        )

    async def connect(self) -> None:
        assert isinstance(self.cortex, CortexSettings)
        self.transport.headers[ACTOR] = self.cortex.actor
        try:
            caller: str | None = parse(w.Whoami, await self._read("auth/whoami"), self.name).caller
        except AuthRejected as exc:
            actor = self.cortex.env_name("actor")
            raise AuthRejected(
                f"{exc.message} (sent as actor `{self.cortex.actor}`)",
                fix=f"{exc.fix}; a minted token also needs {actor} set to its `sub`",
            ) from None
        except RemoteError as exc:
            if exc.status not in (404, 405):
                raise
            caller = None  # a server from before whoami: the configured actor stays
        if caller is not None:
            self.transport.headers[ACTOR] = caller
        self.version = parse(w.Version, await self._read("admin/version"), self.name).version

    async def preflight(self) -> None:
        """The key and the actor, once, before any case is dispatched; the usage route too,
        though a closed one only makes the cost unknown."""
        await self.ready()
        if self.supports(Capability.usage):
            with contextlib.suppress(Unsupported):
                await self.usage()

    # ---- writes -------------------------------------------------------------------------

    def _envelope(
        self,
        scope: str,
        modality: w.Modality,
        role: w.Role,
        text: str,
        at: datetime | None,
        labels: Iterable[str | None] = (),
    ) -> w.Envelope:
        """One write, keyed by the runner's write key (or a fresh one outside a named write)."""
        token = idempotency.current() or uuid.uuid4().hex
        return w.Envelope(
            scope=scope,
            modality=modality,
            content=w.Message(role=role, text=text),
            context=w.WriteContext(
                observed_at=at,
                labels=[WRITE_LABEL + digest(token, 16), *(x for x in labels if x)],
            ),
            idempotency_key="mv-" + digest(token, 56),
        )

    async def _send(self, envelope: w.Envelope) -> None:
        parse(w.Ack, await self._post("experience", envelope.body()), self.name)

    async def _write(self, envelope: w.Envelope) -> str:
        await self._send(envelope)
        self.last_write[envelope.scope] = monotonic()
        self._written[envelope.scope].add(written(envelope))
        return written(envelope)

    async def _flush(self, tenant: str) -> None:
        """Buffered assertions, in bulks that return once every event is searchable."""
        items = self._pending.pop(tenant, [])
        for start in range(0, len(items), 1000):
            bulk = items[start : start + 1000]
            route = self.routes + "experience/bulk"
            body, wait = w.Bulk(items=bulk).body(), {"wait": "indexed"}
            data = await self.request("POST", route, json=body, params=wait, accept=(408,))
            if vendor_code(data) == "WAIT_TIMEOUT":  # stored, not yet searchable: settle
                await self._listed(bulk[0].scope, {written(e) for e in bulk})
            else:
                parse(w.BulkAck, data, self.name)
        if items:
            self.last_write[items[0].scope] = monotonic()
            self._written[items[0].scope] |= {written(e) for e in items}

    def _turn(self, tenant: str, thread: str, turn: Turn) -> w.Envelope:
        return self._envelope(
            self.scope(tenant),
            "conversation",
            turn.role,
            turn.text,
            turn.at,
            [label(THREAD_LABEL, digest(thread, 16))],
        )

    # ---- reads --------------------------------------------------------------------------

    async def _recall(
        self,
        tenant: str,
        query: str,
        k: int,
        *,
        thread: str | None = None,
        as_of: datetime | None = None,
        derived: bool = False,
    ) -> w.Pack:
        limits = {"events": k} | ({"beliefs": DERIVED_K, "facts": DERIVED_K} if derived else {})
        thread_label = label(THREAD_LABEL, digest(thread, 16)) if thread else None
        request = w.RecallRequest(
            scope=self.scope(tenant),
            query=query or None,
            budgets=w.Budgets(per_layer_limits=limits),
            filters=w.Filters(metadata=w.MetadataFilter(labels=[thread_label]))
            if thread_label
            else None,
            temporal=w.Temporal(valid_during=f"{SINCE_EVER}..{_iso(as_of)}") if as_of else None,
        )
        return parse(w.Pack, await self._post("recall", request.body()), self.name)

    async def _pack(
        self,
        title: str,
        tenant: str,
        query: str,
        *,
        thread: str | None = None,
        exclude: Iterable[str] = (),
    ) -> Pack:
        """The pack's events in CortexDB's order, then the beliefs and facts it returned.

        The recall body is closed, so turns still in the prompt cannot be excluded by the
        server: the pack asks for that many more events and drops them here, and the derived
        lines that quote them."""
        skip = {" ".join(text.split()) for text in exclude}

        def kept(line: str) -> bool:  # a derived line quoting a turn still in the prompt
            flat = " ".join(line.split())
            return not any(turn in flat for turn in skip)

        pack = await self._recall(tenant, query, PACK_K + len(skip), thread=thread, derived=True)
        events = [e for e in pack.layers.events if " ".join(e.content.text.split()) not in skip]
        beliefs = [
            b.claim.describe() + (" (contested)" if b.stance == "contested" else "")
            for b in pack.layers.beliefs
            if b.stance in ("supported", "contested")
        ]
        facts = [f.describe() for f in pack.layers.facts]
        sections = [
            Section(title=RECALLED, bullets=[_line(e) for e in events[:PACK_K]]),
            Section(title="Beliefs", bullets=[b for b in beliefs if kept(b)]),
            Section(title="Facts", bullets=[f for f in facts if kept(f)]),
        ]
        return render(title, sections, BUDGET_TOKENS)

    async def _query(self, tenant: str, text: str, as_of: datetime | None, k: int) -> QueryResult:
        await self._flush(tenant)
        pack = await self._recall(tenant, text, k, as_of=as_of)
        hits = [_hit(event) for event in pack.layers.events]
        return QueryResult(hits=hits, abstained=not hits)

    async def _events(self, scope: str) -> list[w.Event]:
        """Every event of the scope once: pages are followed while `has_more` and a cursor
        say so, and the listing's doubles are dropped."""
        found: dict[str, w.Event] = {}
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params: dict[str, Any] = {"scope": scope, "limit": LISTING}
            if cursor:
                params["cursor"] = cursor
            page = parse(w.EventPage, await self._get("events", **params), self.name)
            for event in page.items:
                found.setdefault(event.id, event)
            if not (page.has_more and page.next_cursor):
                return [*found.values()]
            if page.next_cursor == cursor:
                raise RemoteError(f"{self.name}: the event listing of {scope} does not advance")
            cursor = page.next_cursor
        raise RemoteError(f"{self.name}: {scope} lists more than {MAX_PAGES} pages of events")

    # ---- fixture face -------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        self._pending[tenant].append(
            self._envelope(
                self.scope(tenant),
                "document",
                "user",
                assertion.text,
                assertion.recorded_at or assertion.valid_from,
                [label(SOURCE_LABEL, assertion.source)] if assertion.source else [],
            )
        )

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        return await self._query(tenant, text, None, k)

    async def query_at(self, tenant: str, text: str, as_of: datetime, k: int = 5) -> QueryResult:
        return await self._query(tenant, text, as_of, k)

    async def reset(self, tenant: str) -> None:
        self._pending.pop(tenant, None)
        await self.forget(tenant)

    # ---- lifecycle face -----------------------------------------------------------------

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        text = f"{item.title}\n\n{item.text}" if item.title else item.text
        modality: w.Modality = "observation" if item.kind == "learning" else "document"
        envelope = self._envelope(self.scope(tenant), modality, "user", text, item.at)
        return await self._write(envelope)

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        """Recall first, then log the turn: the question must not answer itself."""
        in_prompt = [t.text for t in [*ctx.in_prompt, ctx.turn]]
        pack = await self._pack("Context for the reply", tenant, ctx.turn.text, exclude=in_prompt)
        await self._write(self._turn(tenant, ctx.thread, ctx.turn))
        return pack

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        return await self._write(self._turn(tenant, thread, turn))

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        """A resumed thread without a focus recalls that thread (by its label); otherwise the
        focus is the query."""
        title = (f"Resuming thread {thread}" if thread else "Session start") + (
            f": {focus}" if focus else ""
        )
        return await self._pack(title, tenant, focus or "", thread=None if focus else thread)

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        query = " ".join(t.text for t in dropped)[:MAX_QUERY]
        return await self._pack("Carried over from the compacted turns", tenant, query)

    async def compile_context(
        self, tenant: str, agent: str, heading: str, at: datetime, question: str | None = None
    ) -> Pack:
        return await self._pack(heading, tenant, heading)

    async def build_beliefs(self, tenant: str) -> BeliefReport:
        scope = self.scope(tenant)
        await self.wait_for_enrichment(scope)
        try:
            answer = await self._post("beliefs/build", {"scope": scope})
        except CreditsExhausted as exc:  # optional: a tier without the build halts nothing
            log.warning("%s; the belief build is skipped", exc)
            raise Unsupported(Capability.beliefs) from None
        built = parse(w.Built, answer, self.name)
        beliefs = [
            Belief(subject=w.term(b.claim.subject), value=b.claim.describe()) for b in built.items
        ]
        return BeliefReport(beliefs=beliefs, built=built.built or len(beliefs))

    async def wait_for_enrichment(self, scope: str) -> bool:
        """True once the backlog is drained: empty, with nothing newly queued, for
        `DRAINED_POLLS` polls in a row (the queue empties between batches while later writes
        are still taken in). The backlog is the whole server's, so `scope` plays no part."""
        assert isinstance(self.cortex, CortexSettings)
        if not self.usage_known:
            return False  # the backlog is read from the usage route, which is closed
        deadline = monotonic() + self.cortex.enrich_wait
        quiet, last_queued = 0, None
        while quiet < DRAINED_POLLS and monotonic() < deadline:
            await asyncio.sleep(min(self.cortex.enrich_poll, max(0.0, deadline - monotonic())))
            try:
                backlog = (await self._admin_usage()).enrichment_backlog
            except Unsupported:
                return False
            settled = backlog.jobs_pending == 0 and backlog.jobs_queued_total == last_queued
            quiet = quiet + 1 if settled else 0
            last_queued = backlog.jobs_queued_total
        return quiet >= DRAINED_POLLS

    async def list(self, tenant: str) -> list[str]:
        """The write labels of every event the tenant's scope lists so far."""
        return await self._labels(self.scope(tenant))

    async def _labels(self, scope: str) -> builtins.list[str]:  # `list` is a method here
        return [*dict.fromkeys(written_labels(await self._events(scope)))]

    async def forget(self, tenant: str) -> None:
        """Once every write this engine made to the scope is listed (a write accepted but not
        yet indexed would survive a forget sent before it), its events go by id."""
        scope = self.scope(tenant)
        ids = [event.id for event in await self._listed(scope, self._written.pop(scope, set()))]
        for start in range(0, len(ids), w.FORGET_BATCH):
            selector = w.Selector(memory_ids=ids[start : start + w.FORGET_BATCH])
            await self._forget(w.ForgetRequest(scope=scope, selector=selector))
        self.last_write.pop(scope, None)

    async def _listed(self, scope: str, labels: set[str]) -> builtins.list[w.Event]:
        """The scope's events, once every one of `labels` is among them; polled with a
        doubling pause, for at most the request timeout."""
        deadline = monotonic() + self.settings.timeout
        poll = FIRST_POLL
        while True:
            events = await self._events(scope)
            if labels <= set(written_labels(events)):
                return events
            if monotonic() > deadline:
                raise RemoteError(
                    f"{self.name}: writes to {scope} not listed after {self.settings.timeout:g}s"
                )
            await asyncio.sleep(poll)
            poll = min(LAST_POLL, poll * 2)

    async def _forget(self, request: w.ForgetRequest) -> None:
        await self._post("forget", request.body())

    async def inspect(self, tenant: str) -> Derived:
        scope = self.scope(tenant)
        facts = parse(w.Listing, await self._get("facts", scope=scope, view="local"), self.name)
        beliefs = parse(w.Listing, await self._get("beliefs", scope=scope, view="local"), self.name)
        return Derived(
            facts=[w.WireFact.model_validate(row).describe() for row in facts.rows()],
            beliefs=[w.WireBelief.model_validate(row).claim.describe() for row in beliefs.rows()],
        )

    async def _admin_usage(self) -> w.AdminUsage:
        """`Unsupported` once the route answers 403 or 404: usage unknown, said once."""
        if not self.usage_known:
            raise Unsupported(Capability.usage)
        try:
            return parse(w.AdminUsage, await self._get("admin/usage"), self.name)
        except EngineRefused as exc:
            if exc.status not in (403, 404):
                raise
            self.usage_known = False
            log.warning(
                "%s: v1/admin/usage answered %s: usage and cost are unknown for this run "
                "(shown as a dash); the key itself was accepted",
                self.name,
                exc.status,
            )
            raise Unsupported(Capability.usage) from None

    async def usage(self) -> Usage:
        total = (await self._admin_usage()).total
        return Usage(
            calls=total.calls,
            tokens=total.tokens_total + total.tokens_unsplit,
            usd_micros=round(total.cost_usd * 1_000_000),
        )


def written(envelope: w.Envelope) -> str:
    """The label `list` reports for this write."""
    labels = envelope.context.labels or []
    return labels[0]


def written_labels(events: Iterable[w.Event]) -> Iterable[str]:
    for event in events:
        yield from (x for x in event.context.labels if x.startswith(WRITE_LABEL))


def _iso(at: datetime) -> str:
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).isoformat().replace("+00:00", "Z")


def _line(event: w.Event) -> str:
    """A pack line: a logged turn with its time and speaker, anything else as stored."""
    content = event.content
    if event.modality == "conversation" and content.role:
        return turn_bullet(content.role, event.context.observed_at, content.text)
    return content.text


def _hit(event: w.Event) -> Hit:
    labels = event.context.labels
    sources = [x.removeprefix(SOURCE_LABEL) for x in labels if x.startswith(SOURCE_LABEL)]
    return Hit(text=event.content.text, source=sources[0] if sources else None, sources=sources)
