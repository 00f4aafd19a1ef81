"""`http`: any engine that speaks memeval's REST protocol, in whatever language it is written.

The URL comes from `MEMEVAL_HTTP_URL`, `--url` or `http?url=...`; the bearer token only from
`MEMEVAL_HTTP_TOKEN`. What the engine supports is what the server declares at `GET
/v1/engine`, read on the first call; a 501 names the capability it lacks.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import SettingsConfigDict

from memeval import clock
from memeval.engines import idempotency
from memeval.engines.adapters import protocol as p
from memeval.engines.adapters.remote import RemoteEngine, decode, parse
from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.adapters.transport import RemoteError
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
from memeval.errors import EngineUnavailable, Unsupported, UsageError

PREFLIGHT_TIMEOUT_S = 5.0


class HttpSettings(EngineSettings):
    model_config = SettingsConfigDict(env_prefix="MEMEVAL_HTTP_")
    engine = "http"
    token: SecretStr = Field(description="Bearer token the server expects.")


class HttpEngine(RemoteEngine):
    name = "http"
    settings_model = HttpSettings
    key_field = "token"
    capabilities_from_server = True

    async def connect(self) -> None:
        info = parse(p.EngineInfo, await self.fetch("GET", p.ENGINE), self.name)
        if info.protocol != p.VERSION:
            raise RemoteError(
                f"http: the server speaks protocol {info.protocol}, memeval speaks {p.VERSION}"
            )
        self.remote_name = info.name
        self.capabilities = frozenset(info.capabilities)

    async def preflight(self) -> None:
        """`GET /v1/engine`, through a transport that gives up within seconds: the route needs
        the token, so one answer proves the server is up, takes the token and speaks our
        protocol version. Each failure names what to change. Four quick retries (3.75 s of
        backoff in all) keep a flaky front door, which a case would ride out, from failing the
        whole run: behind 20% 5xx a single retry refused one run in ten."""
        url = self.settings.url
        quick = self.make_transport(
            timeout=min(self.settings.timeout, PREFLIGHT_TIMEOUT_S), retries=4, backoff=0.25
        )
        try:
            info = parse(
                p.EngineInfo, decode(await quick.call("GET", p.ENGINE), self.name), self.name
            )
        except EngineUnavailable as exc:
            raise UsageError(
                f"http: no engine answers at {url} ({exc})",
                fix="start the server, or point --url (or MEMEVAL_HTTP_URL) at it",
            ) from None
        except RemoteError as exc:
            raise UsageError(
                f"http: {url} does not speak memeval's protocol: {exc}",
                fix="point --url (or MEMEVAL_HTTP_URL) at a memeval protocol server; "
                f"`memeval conformance {url}` checks one",
            ) from None
        finally:
            await quick.aclose()
        if info.protocol != p.VERSION:
            raise UsageError(
                f"http: the server at {url} speaks protocol {info.protocol}, memeval speaks "
                f"{p.VERSION}",
                fix="upgrade the server or memeval so both speak the same version",
            )

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        """One protocol call; a 501 becomes `Unsupported`, naming what the server lacks.

        A write the runner named carries its `Idempotency-Key`, the same on every retry, so a
        write whose response was lost is stored once by a server that honours it."""
        key = idempotency.request_key() if method == "POST" else None
        headers = {idempotency.HEADER: key} if key is not None else {}
        if clock.is_pinned():
            headers[p.NOW_HEADER] = clock.now().isoformat()
        try:
            return await self.request(method, path, json=body, headers=headers or None)
        except RemoteError as exc:
            if exc.status == 501 and isinstance(exc.body, dict):
                capability = exc.body.get("capability")
                if isinstance(capability, str) and capability in Capability.__members__:
                    raise Unsupported(Capability(capability)) from None
            raise

    async def _tenant(self, method: str, tenant: str, route: str, body: Any = None) -> Any:
        return await self._call(method, p.tenant_path(tenant, route), body)

    async def _pack(self, tenant: str, route: str, body: BaseModel) -> Pack:
        data = await self._tenant("POST", tenant, route, body.model_dump(mode="json"))
        return parse(Pack, data, self.name)

    # ---- fixture face -------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        await self._tenant("POST", tenant, p.ASSERTIONS, assertion.model_dump(mode="json"))

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        body = p.QueryRequest(text=text, k=k).model_dump(mode="json")
        return parse(QueryResult, await self._tenant("POST", tenant, p.QUERY, body), self.name)

    async def query_at(self, tenant: str, text: str, as_of: datetime, k: int = 5) -> QueryResult:
        body = p.QueryRequest(text=text, k=k, as_of=as_of).model_dump(mode="json")
        return parse(QueryResult, await self._tenant("POST", tenant, p.QUERY, body), self.name)

    async def conflicts(self, tenant: str, assertion_id: str) -> list[ConflictReport]:
        path = p.tenant_path(tenant, p.CONFLICTS, assertion_id=assertion_id)
        data = await self._call("GET", path)
        return [parse(ConflictReport, c, self.name) for c in data or []]

    async def reset(self, tenant: str) -> None:
        await self._tenant("DELETE", tenant, p.ASSERTIONS)

    # ---- lifecycle face -----------------------------------------------------------------

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        data = await self._tenant("POST", tenant, p.MEMORIES, item.model_dump(mode="json"))
        return parse(p.WriteAck, data, self.name).id

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        return await self._pack(tenant, p.PRE_TURN, ctx)

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        body = p.PostTurnRequest(agent=agent, thread=thread, turn=turn).model_dump(mode="json")
        data = await self._tenant("POST", tenant, p.POST_TURN, body)
        return parse(p.WriteAck, data, self.name).id

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        body = p.SessionRequest(agent=agent, thread=thread, focus=focus, at=at, question=question)
        return await self._pack(tenant, p.SESSIONS, body)

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        body = p.CompactionRequest(agent=agent, thread=thread, dropped=dropped)
        return await self._pack(tenant, p.COMPACTION, body)

    async def compile_context(
        self, tenant: str, agent: str, heading: str, at: datetime, question: str | None = None
    ) -> Pack:
        body = p.ContextRequest(agent=agent, heading=heading, at=at, question=question)
        return await self._pack(tenant, p.CONTEXT, body)

    async def build_beliefs(self, tenant: str) -> BeliefReport:
        data = await self._tenant("POST", tenant, p.BELIEFS_BUILD)
        return parse(BeliefReport, data, self.name)

    async def list(self, tenant: str) -> list[str]:
        return parse(p.Listing, await self._tenant("GET", tenant, p.MEMORIES), self.name).ids

    async def forget(self, tenant: str) -> None:
        await self._tenant("DELETE", tenant, p.MEMORIES)

    async def forget_write(self, tenant: str, write_id: str) -> None:
        await self._call("DELETE", p.tenant_path(tenant, p.MEMORY, write_id=write_id))

    async def inspect(self, tenant: str) -> Derived:
        return parse(Derived, await self._tenant("GET", tenant, p.DERIVED), self.name)

    async def usage(self) -> Usage:
        return parse(Usage, await self._call("GET", p.USAGE), self.name)
