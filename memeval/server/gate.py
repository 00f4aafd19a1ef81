"""What every request meets before FastAPI parses a byte of its body: the token, then a size
cap and a deadline on the body.

FastAPI checks a dependency only after the body has been read and parsed, so without this a
caller with no token could send any number of 100 MB bodies (each held in memory whole), learn
from a 422 how a body is validated, or hold a connection open by sending a byte a minute.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from pydantic import SecretStr

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Problem = Callable[[int, str], Callable[[Scope, Receive, Send], Awaitable[None]]]

MAX_BODY_BYTES = 4 * 1024 * 1024
"""Four times the largest suite file: no memory, turn or query memeval sends comes near it."""
BODY_TIMEOUT_S = 30.0
"""For the whole body to arrive, from the first byte the handler waits for."""


def token_matches(header: str | None, token: SecretStr) -> bool:
    """Whether an Authorization header carries `Bearer TOKEN`, compared in constant time."""
    scheme, _, given = (header or "").partition(" ")
    expected = token.get_secret_value().encode()
    return scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), expected)


class Gate:
    """Pure ASGI, so it runs before routing and body parsing; paths in `public` (the OpenAPI
    document and its viewers) pass untouched."""

    def __init__(
        self,
        app: Callable[[Scope, Receive, Send], Awaitable[None]],
        *,
        token: SecretStr,
        public: set[str],
        problem: Problem,
        max_body: int = MAX_BODY_BYTES,
        body_timeout: float = BODY_TIMEOUT_S,
    ) -> None:
        self.app = app
        self.token = token
        self.public = public
        self.problem = problem
        self.max_body = max_body
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.public:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not token_matches(headers.get("authorization"), self.token):
            await self.problem(401, "missing or wrong bearer token")(scope, receive, send)
            return
        declared = headers.get("content-length", "0")
        if not declared.isdigit():
            await self.problem(400, "Content-Length is not a number")(scope, receive, send)
            return
        if int(declared) > self.max_body:
            await self.problem(413, self._too_large())(scope, receive, send)
            return
        try:
            body = await asyncio.wait_for(self._read(receive), self.body_timeout)
        except TimeoutError:
            said = f"the body did not arrive within {self.body_timeout:g} s"
            await self.problem(408, said)(scope, receive, send)
            return
        if body is None:
            await self.problem(413, self._too_large())(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _too_large(self) -> str:
        return f"the body is larger than {self.max_body:,} bytes"

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body, or None once it passes the cap (a chunked upload declares none)."""
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return b"".join(parts)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body read ahead, handed to the app as one message; then the client's own."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
