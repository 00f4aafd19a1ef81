"""Does a server speak memeval's memory protocol, guard it, and keep tenants apart?

`memeval conformance URL` runs these checks against a live server, for someone wiring up an
engine in another language before running whole suites on it. Each check writes a marker no
engine could guess into one tenant and looks for it where it must and must not be. Checks
that need a capability the server does not declare are shown as skipped, with the reason,
not passed. Every tenant used is forgotten at the end.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from enum import StrEnum
from time import monotonic

import httpx
from pydantic import BaseModel, SecretStr

from memeval.engines.adapters import protocol as p
from memeval.engines.adapters.http import HttpEngine, HttpSettings
from memeval.engines.types import Assertion, Capability, MemoryItem, Turn, TurnContext

SETTLE_S = 10.0


class Verdict(StrEnum):
    passed = "pass"
    failed = "FAIL"
    skipped = "skip"


class Check(BaseModel):
    name: str
    verdict: Verdict
    detail: str = ""


class _Failed(Exception):
    pass


class Conformance:
    def __init__(self, url: str, token: SecretStr, *, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        run = secrets.token_hex(4)
        self.a, self.b = f"conformance-{run}-a", f"conformance-{run}-b"
        self.marker = f"zq{secrets.token_hex(6)}"  # one word: shares no term with anything
        self.engine = HttpEngine(
            HttpSettings(url=self.url, token=token, timeout=timeout, retries=0, backoff=0)
        )
        self.checks: list[Check] = []
        self.doc_a = ""  # tenant A's write, once the lifecycle round trip made it

    async def run(self) -> list[Check]:
        try:
            await self._check("speaks protocol v" + p.VERSION, self._speaks)
            if self.checks[-1].verdict is Verdict.passed:
                await self._check("refuses a missing token", lambda: self._auth(None))
                await self._check("refuses a wrong token", lambda: self._auth("not-the-token"))
                await self._fixture_checks()
                await self._lifecycle_checks()
        finally:
            await self._cleanup()
            await self.engine.close()
        return self.checks

    async def _check(self, name: str, body: Callable[[], Awaitable[str]]) -> None:
        try:
            detail = await body()
        except _Failed as exc:
            self.checks.append(Check(name=name, verdict=Verdict.failed, detail=str(exc)))
        except Exception as exc:  # any error is this check's failure, the rest still run
            detail = f"{type(exc).__name__}: {exc}"
            self.checks.append(Check(name=name, verdict=Verdict.failed, detail=detail))
        else:
            self.checks.append(Check(name=name, verdict=Verdict.passed, detail=detail))

    def _skip(self, name: str, capability: Capability) -> None:
        detail = f"the server does not declare `{capability}`"
        self.checks.append(Check(name=name, verdict=Verdict.skipped, detail=detail))

    async def _speaks(self) -> str:
        await self.engine.ready()
        caps = ", ".join(sorted(self.engine.capabilities)) or "none"
        return f"engine `{self.engine.remote_name}`, capabilities: {caps}"

    async def _auth(self, token: str | None) -> str:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        paths = [p.ENGINE, p.tenant_path(self.a, p.MEMORIES), p.tenant_path(self.a, p.QUERY)]
        async with httpx.AsyncClient(base_url=self.url, timeout=self.timeout) as client:
            for path in paths:
                method = "POST" if path.endswith(p.QUERY) else "GET"
                body = {"text": self.marker} if method == "POST" else None
                response = await client.request(method, path, headers=headers, json=body)
                if response.status_code not in (401, 403):
                    raise _Failed(f"{method} {path} answered {response.status_code}, not 401")
        return f"401 on {len(paths)} routes"

    # ---- fixture face -------------------------------------------------------------------

    async def _fixture_checks(self) -> None:
        if not self.engine.supports(Capability.store):
            for name in ("fixture round trip", "fixture tenants kept apart"):
                self._skip(name, Capability.store)
            return
        await self._check("fixture round trip", self._fixture_round_trip)
        await self._check("fixture tenants kept apart", self._fixture_apart)

    async def _fixture_round_trip(self) -> str:
        assertion = Assertion(
            id="conformance-marker",
            text=f"The conformance marker is {self.marker}.",
            source="memeval conformance",
        )
        await self.engine.store(self.a, assertion)
        found = await self.engine.query(self.a, f"What is the conformance marker {self.marker}?")
        if not any(self.marker in h.text for h in found.hits):
            raise _Failed("a stored assertion was not found by its own tenant's query")
        return "stored, then found in the same tenant"

    async def _fixture_apart(self) -> str:
        found = await self.engine.query(self.b, f"What is the conformance marker {self.marker}?")
        leaked = [h.text for h in found.hits if self.marker in h.text]
        if leaked or (found.answer and self.marker in found.answer):
            raise _Failed(f"tenant B's query returned tenant A's assertion: {leaked[:1]}")
        return "tenant B's query holds nothing of tenant A's"

    # ---- lifecycle face -----------------------------------------------------------------

    async def _lifecycle_checks(self) -> None:
        names = (
            "lifecycle round trip",
            "lifecycle tenants kept apart",
            "forget touches one tenant only",
        )
        if not self.engine.supports(Capability.lifecycle):
            for name in names:
                self._skip(name, Capability.lifecycle)
            return
        await self._check(names[0], self._lifecycle_round_trip)
        await self._check(names[1], self._lifecycle_apart)
        await self._check(names[2], self._forget_apart)

    def _item(self, tenant: str) -> MemoryItem:
        return MemoryItem(
            id=f"{tenant}-doc",
            title="Conformance",
            text=f"The lifecycle marker of {tenant} is {self.marker}.",
            at=_now(),
        )

    async def _settled(self, tenant: str, written: str) -> bool:
        deadline = monotonic() + SETTLE_S
        while monotonic() < deadline:
            if written in await self.engine.list(tenant):
                return True
            await asyncio.sleep(0.2)
        return False

    async def _lifecycle_round_trip(self) -> str:
        self.doc_a = await self.engine.ingest(self.a, self._item(self.a))
        if not await self._settled(self.a, self.doc_a):
            raise _Failed(f"ingest returned `{self.doc_a}`, which `list` never showed")
        return f"ingested, then listed within {SETTLE_S:g}s"

    def _needs_round_trip(self) -> None:
        if not self.doc_a:
            raise _Failed("needs the lifecycle round trip to pass first")

    async def _lifecycle_apart(self) -> str:
        self._needs_round_trip()
        if self.doc_a in await self.engine.list(self.b):
            raise _Failed("tenant B's list shows tenant A's write")
        turn = Turn(role="user", text=f"What is the lifecycle marker {self.marker}?", at=_now())
        pack = await self.engine.pre_turn(
            self.b, TurnContext(agent="conformance", thread="probe", turn=turn)
        )
        body = pack.markdown.replace(turn.text, "")  # a pack may quote the question itself
        if f"of {self.a}" in body:
            raise _Failed("tenant B's pack holds tenant A's document")
        return "tenant B's list and pack hold nothing of tenant A's"

    async def _forget_apart(self) -> str:
        self._needs_round_trip()
        doc_b = await self.engine.ingest(self.b, self._item(self.b))
        if not await self._settled(self.b, doc_b):
            raise _Failed(f"tenant B's write `{doc_b}` never showed in `list`")
        await self.engine.forget(self.a)
        if self.doc_a in await self.engine.list(self.a):
            raise _Failed("tenant A's write is still listed after forgetting tenant A")
        if doc_b not in await self.engine.list(self.b):
            raise _Failed("forgetting tenant A also removed tenant B's write")
        return "forgetting A left B's writes in place"

    async def _cleanup(self) -> None:
        for tenant in (self.a, self.b):
            for call in (self.engine.reset, self.engine.forget):
                try:
                    await call(tenant)
                except Exception:  # best effort: a server that failed a check may fail here
                    continue


def _now() -> datetime:
    return datetime.now(UTC)


async def check(url: str, token: SecretStr, *, timeout: float = 10.0) -> list[Check]:
    return await Conformance(url, token, timeout=timeout).run()
