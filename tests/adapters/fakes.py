"""What every fake service here shares: a real server on 127.0.0.1, faults on demand, and a
record of what the client sent (headers included), so tests check the wire, not a mock."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response


@dataclass
class Fault:
    """Answer the next matching request with `status` after `delay` seconds; with status 0,
    only delay it and then answer normally (a slow reply)."""

    status: int
    retry_after: str | None = None
    delay: float = 0.0
    body: Any = None
    path: str = ""  # only requests whose path contains this
    lost: bool = False  # serve the request first, then answer `status`: a reply lost on the way
    raw: bytes | None = None  # answer these bytes as they are (a cut body, a proxy's page)
    content_type: str = "application/json"


@dataclass
class Seen:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Wire:
    faults: deque[Fault] = field(default_factory=deque)
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def inject(self, *faults: Fault) -> None:
        with self.lock:
            self.faults.extend(faults)

    def take(self, path: str) -> Fault | None:
        with self.lock:
            for fault in list(self.faults):
                if fault.path in path:
                    self.faults.remove(fault)
                    return fault
        return None

    def calls(self, fragment: str, method: str | None = None) -> list[Seen]:
        return [s for s in self.seen if fragment in s.path and method in (None, s.method)]


def record(app: FastAPI, wire: Wire) -> None:
    @app.middleware("http")
    async def faults_and_log(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        body = await request.body()
        wire.seen.append(
            Seen(
                request.method,
                request.url.path,
                request.url.query,
                {k.lower(): v for k, v in request.headers.items()},
                body,
            )
        )
        fault = wire.take(request.url.path)
        if fault is not None:
            await asyncio.sleep(fault.delay)
            if fault.lost:
                await call_next(request)
            if fault.status:
                headers = {"Retry-After": fault.retry_after} if fault.retry_after else None
                if fault.raw is not None:
                    return Response(
                        fault.raw, fault.status, headers=headers, media_type=fault.content_type
                    )
                content = fault.body if fault.body is not None else {"error": "injected"}
                return JSONResponse(content, status_code=fault.status, headers=headers)
        return await call_next(request)


def bearer(request: Request, key: str, scheme: str = "Bearer") -> JSONResponse | None:
    """401 unless the request carries `scheme key`; 403 for the key that is out of credit."""
    given = request.headers.get("authorization", "")
    if given == f"{scheme} spent-key":
        return JSONResponse({"error": "Key limit exceeded"}, status_code=403)
    if given != f"{scheme} {key}":
        return JSONResponse({"error": "invalid credentials"}, status_code=401)
    return None


@contextmanager
def running(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn on a free port in a thread; yields its base URL."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
