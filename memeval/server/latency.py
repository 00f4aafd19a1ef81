"""A fixed delay before every request: `memeval serve --latency-ms 50`.

Real engines answer in 50-500 ms, mostly waiting on their network and their models; a served
engine on 127.0.0.1 answers in under a millisecond. The delay makes a local server behave like
a remote one, so the farm's concurrency and rate limits can be measured against a known
latency. It is an `asyncio.sleep`, so delayed requests overlap as they would at a real service.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Receive, Scope, Send


class Latency:
    """ASGI middleware: every HTTP request waits `seconds` before the app sees it."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await asyncio.sleep(self.seconds)
        await self.app(scope, receive, send)
