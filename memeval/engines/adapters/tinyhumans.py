"""`tinyhumans`: CortexDB hosted behind the TinyHumans backend, on its `/memory/*` routes.

The bodies are `cortex`'s (TinyMemory's notes: "the same on both wires"); what differs is
what TinyMemory's doubles measured against the hosted backend:

- every answer is `{"success": true, "data": ...}` (a failure `{"success": false, "error",
  "errorCode"}`), as TinyHumans' own SDK reads it; a 2xx body without the envelope is an error;
- the key is a session JWT or a `tiny_live_` key, sent as a bearer, with no actor header;
- there is no bulk route and no `?wait=`: one event per request, each under an
  `Idempotency-Key` claim (the runner's write key, reused by that write's retries). The memory
  API takes the claim before it forwards the write and answers any replay of it with 409
  CONFLICT (relayed as a 400 `CONFLICT` by some backends), so a conflict on a claimed write
  means it is already stored: success. `list` is what proves it landed;
- fixture writes are then polled for on the listing, since nothing can be waited for;
- forget carries a claim too and a 404 on its retry means done; recall and listings carry
  none;
- scopes are `type:id` segments of `[A-Za-z0-9_-]`, at most 31 (checked in `cortex_scope`);
- no admin, version or inspector routes: no usage, derived facts or beliefs (`captured`) or
  enrichment backlog. Hosted memory builds beliefs on its own schedule, so the synthesis step
  waits a fixed `enrich_wait` (default 60 s: production derives facts 30–45 s after a write)
  after the tenant's last write and asks for no build.

memeval does not call the `tinyhumansai` SDK here: its client is synchronous, speaks the
document API (`/memory/insert`, `/memory/query`, namespace-wide delete) rather than hosted
CortexDB's event routes, and sends no `Idempotency-Key`. Its envelope, bearer and error
handling are what `tests/adapters/test_tinyhumans_contract.py` proves the shared fake against.
Hosted memory is billed to the key's account: use a test account.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from time import monotonic
from typing import Any

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from memeval.engines.adapters import cortex_wire as w
from memeval.engines.adapters.cortex import CortexEngine, ScopedSettings, written
from memeval.engines.adapters.remote import parse
from memeval.engines.adapters.transport import RemoteError
from memeval.engines.base import Engine
from memeval.engines.idempotency import HEADER
from memeval.engines.types import BeliefReport, Capability

JWT = re.compile(r"^[\w-]+\.[\w-]+\.[\w-]+$")


class TinyHumansSettings(ScopedSettings):
    model_config = SettingsConfigDict(env_prefix="TINYHUMANS_")
    engine = "tinyhumans"
    url: str = Field(
        default="https://api.tinyhumans.ai",
        validation_alias=AliasChoices("url", "TINYHUMANS_API_URL"),
        description="The TinyHumans backend.",
    )
    api_key: SecretStr = Field(description="A JWT or a tiny_live_ key (billed: use a test one).")
    enrich_wait: float = Field(
        default=60.0, ge=0, description="Seconds after a tenant's last write before synthesis."
    )

    @field_validator("api_key")
    @classmethod
    def _key_shape(cls, value: SecretStr) -> SecretStr:
        key = value.get_secret_value().strip()
        if not (key.startswith("tiny_live_") or JWT.match(key)):
            raise ValueError("the key is neither a JWT nor a tiny_live_ key")
        return SecretStr(key)


class TinyHumansEngine(CortexEngine):
    name = "tinyhumans"
    settings_model = TinyHumansSettings
    verified_against = "tinyhumansai 0.5.6 SDK; TinyMemory's measured /memory/* doubles"
    capabilities = CortexEngine.capabilities - {Capability.inspect, Capability.usage}
    notes = (
        "hosted memory has no admin routes: a fixed --enrich-wait replaces backlog polling",
        "no usage, derived facts or beliefs, or conflict lookups are reported",
    )
    routes = "/memory/"

    # No admin or inspector routes: the base Engine's answer (`Unsupported`) stands.
    inspect = Engine.inspect
    usage = Engine.usage

    async def connect(self) -> None:
        """Nothing to learn: the backend names the actor itself."""

    async def preflight(self) -> None:
        """One scope listing under the prefix: the backend's own health probe, proving the
        route, the key and the credit in one request."""
        await self._get("scopes", prefix=self.cortex.scope_prefix, limit=1)

    def unwrap(self, data: Any) -> Any:
        if not isinstance(data, dict) or "success" not in data:
            raise RemoteError(f"{self.name}: an answer without its success envelope")
        if not data["success"]:
            code = data.get("errorCode") or "ERROR"
            raise RemoteError(f"{self.name}: [{code}] {data.get('error') or 'request failed'}")
        return data.get("data")

    async def _send(self, envelope: w.Envelope) -> None:
        try:
            data = await self._post(
                "experience", envelope.body(), headers={HEADER: envelope.idempotency_key}
            )
        except RemoteError as exc:
            if not claimed(exc):
                raise
        else:
            parse(w.Ack, data, self.name)

    async def _flush(self, tenant: str) -> None:
        """One write per request, then poll the listing until every one is listed."""
        items = self._pending.pop(tenant, [])
        for envelope in items:
            await self._write(envelope)
        if items:
            await self._listed(self.scope(tenant), {written(e) for e in items})

    async def _forget(self, request: w.ForgetRequest) -> None:
        try:  # a fresh claim per request, which its own retries reuse
            await self._post("forget", request.body(), headers={HEADER: uuid.uuid4().hex})
        except RemoteError as exc:
            if exc.status != 404:  # a retry of a forget that was applied finds nothing
                raise

    async def build_beliefs(self, tenant: str) -> BeliefReport:
        """No build route: wait out hosted enrichment, which builds on its own schedule."""
        written_at = self.last_write.get(self.scope(tenant))
        if written_at is not None:
            await asyncio.sleep(max(0.0, written_at + self.cortex.enrich_wait - monotonic()))
        return BeliefReport()


def claimed(exc: RemoteError) -> bool:
    """The memory API's answer to a claim it already holds: 409, or a 400 `CONFLICT`."""
    body = exc.body if isinstance(exc.body, dict) else {}
    return exc.status == 409 or (exc.status == 400 and body.get("errorCode") == "CONFLICT")
