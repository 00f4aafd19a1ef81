"""`tinyhumans`: CortexDB hosted behind the TinyHumans backend.

The same calls as `cortex`, with the hosted service's differences:

- routes live under `/memory/*` (`/memory/experience`, `/memory/recall`, ...) and every answer
  is wrapped as `{"success": bool, "data": ...}` (an error as `{"success": false, "error"}`),
  as TinyHumans' public SDK reads them;
- the key is a JWT or a permanent `tiny_live_...` key, sent as a bearer, with no actor to
  learn; every write carries an `Idempotency-Key` header, as with `cortex`;
- there are no admin or inspector routes. So the run cannot watch the enrichment queue: it
  waits a fixed `enrich_wait` seconds (default 60) after a tenant's last write before the
  belief build; and it reports no usage, no derived facts or beliefs (`captured`) and no
  conflict lookups. Those show as *unsupported* in the report, never as zero.

Hosted memory is billed to the key's account: use a test account.
"""

from __future__ import annotations

import asyncio
import re
from time import monotonic
from typing import Any

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from memeval.engines.adapters.cortex import CortexEngine, CortexSettings
from memeval.engines.adapters.transport import RemoteError
from memeval.engines.base import Engine
from memeval.engines.types import Capability

JWT = re.compile(r"^[\w-]+\.[\w-]+\.[\w-]+$")


class TinyHumansSettings(CortexSettings):
    model_config = SettingsConfigDict(env_prefix="TINYHUMANS_")
    engine = "tinyhumans"
    url: str = Field(
        default="https://api.tinyhumans.ai",
        validation_alias=AliasChoices("url", "TINYHUMANS_API_URL"),
        description="The TinyHumans backend.",
    )
    api_key: SecretStr = Field(description="A JWT or a tiny_live_ key (billed: use a test one).")
    enrich_wait: float = Field(
        default=60.0, ge=0, description="Seconds after a tenant's last write before beliefs."
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
    capabilities = CortexEngine.capabilities - {
        Capability.inspect,
        Capability.usage,
        Capability.conflicts,
    }
    notes = (
        "hosted memory has no admin routes: a fixed --enrich-wait replaces backlog polling",
        "no usage, derived facts, beliefs or conflict lookups are reported",
    )
    routes = "/memory/"

    # No admin or inspector routes: the base Engine's answer (`Unsupported`) stands.
    conflicts = Engine.conflicts
    inspect = Engine.inspect
    usage = Engine.usage

    async def connect(self) -> None:
        """Nothing to learn: the key names the account, and there is no health route."""

    def unwrap(self, data: Any) -> Any:
        if isinstance(data, dict) and "success" in data:
            if not data["success"]:
                raise RemoteError(f"tinyhumans: {data.get('error') or 'request failed'}")
            return data.get("data")
        return data

    async def wait_for_enrichment(self, scope: str) -> None:
        """`enrich_wait` seconds after the scope's last write, however long ago that was."""
        written = self.last_write.get(scope)
        if written is not None:
            await asyncio.sleep(max(0.0, written + self.cortex.enrich_wait - monotonic()))
