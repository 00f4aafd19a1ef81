"""What every engine behind HTTP shares: settings, one transport, and a connect-once step.

Engines are built by name inside a worker, synchronously, before any event loop runs them;
so construction only validates settings, and the first call connects (learns the actor,
reads capabilities or a usage baseline) on the loop that will use the connection.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Collection
from typing import Any, ClassVar, TypeVar

import httpx
from pydantic import BaseModel, SecretStr, ValidationError

from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.adapters.transport import RemoteError, Transport
from memeval.engines.base import Engine

M = TypeVar("M", bound=BaseModel)


class RemoteEngine(Engine):
    settings_model: ClassVar[type[EngineSettings]]
    key_field: ClassVar[str] = "api_key"
    scheme: ClassVar[str] = "Bearer"
    notes: ClassVar[tuple[str, ...]] = ()  # what a report on this engine cannot show, and why
    capabilities_from_server: ClassVar[bool] = False  # known only once connected

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self.transport = self.make_transport(
            timeout=settings.timeout, retries=settings.retries, backoff=settings.backoff
        )
        self._connected = False
        self._connecting: asyncio.Lock | None = None

    def make_transport(self, *, timeout: float, retries: int, backoff: float) -> Transport:
        """The engine's transport; `preflight` builds one that gives up within seconds, since
        a service that is down should stop the run at once, not after a case's retries."""
        key = getattr(self.settings, self.key_field, None)
        return Transport(
            self.settings.url,
            engine=self.name,
            key=key if isinstance(key, SecretStr) else None,
            key_env=self.settings.env_name(self.key_field),
            scheme=self.scheme,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            max_wait=self.settings.retry_after_max,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.settings.url})"

    async def close(self) -> None:
        await self.transport.aclose()

    async def ready(self) -> None:
        """Connect once, whichever call comes first; concurrent cases wait for the same one."""
        if self._connected:
            return
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if not self._connected:
                await self.connect()
                self._connected = True

    async def connect(self) -> None:
        """Override to learn what the engine needs before its first real call."""

    async def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """The response's JSON (None when empty), after connecting; `kwargs` as for `fetch`."""
        await self.ready()
        return await self.fetch(method, path, **kwargs)

    async def fetch(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        accept: Collection[int] = (),
    ) -> Any:
        """`request` without connecting first: what `connect` itself uses; `accept` as for
        `Transport.call`."""
        response = await self.transport.call(
            method, path, json=json, params=params, headers=headers, accept=accept
        )
        return self.unwrap(decode(response, self.name))

    def unwrap(self, data: Any) -> Any:
        """Override for services that wrap every answer in an envelope."""
        return data


def decode(response: httpx.Response, engine: str) -> Any:
    """The JSON of an answer the transport already checked (None for a 204)."""
    return response.json() if response.content else None


def parse(model: type[M], data: Any, engine: str) -> M:
    """A response body as `model`; a malformed one is the engine's failure, not a crash."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise RemoteError(
            f"{engine} answered an unexpected {model.__name__}: {where}: {first['msg']}",
            engine=engine,
            route=f"reply {model.__name__}",
        ) from None


def idempotency_key() -> str:
    """Fresh per write and reused by that write's retries, so a request retried after a
    timeout is stored once. Not derived from the content: a case retried on the same tenant
    after a forget must store its writes again, not replay the first answers."""
    return uuid.uuid4().hex
