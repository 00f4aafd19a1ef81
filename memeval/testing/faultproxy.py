"""A fault-injecting HTTP proxy: put it in front of an engine's server and see what holds.

Every request is forwarded to the upstream server unless a seeded draw turns it into a fault:

- a **5xx** (500, 502 or 503 in turn), answered either before the upstream sees the request
  or, in a share `after_upstream` of cases, after the upstream has handled it, so a write was
  stored and its client is told it failed;
- a **429** with `Retry-After`, before the upstream sees it, as a rate limiter in front
  would answer;
- a **timeout**: the response is held for `hold` seconds, past the client's timeout, before or
  after the upstream handled the request;
- a **malformed** 200, in turn a JSON body cut in the middle, a proxy's HTML page and an empty
  body, before or after the upstream handled the request (after: the write was stored and the
  client cannot read that it was);
- an **edge status** a CDN or load balancer answers, in turn 408, 499, 520, 522 and 524,
  before or after the upstream;
- a **lone surrogate**: the upstream's own 200, with half of a UTF-16 pair (`\\ud83d`, what a
  JavaScript server sends when it cuts a string inside an emoji) after every pack's
  `markdown`, always after the upstream handled the request;
- a **long wait**: a 503 whose Retry-After (`long_retry_after`) is longer than a client
  should sleep through in one call, at most `long_waits` times in all (a maintenance window
  is rare; one on every hundredth request would keep a long case from ever finishing).

`drop_first_writes` adds the fault a write-once protocol must survive: the first attempt of
that share of distinct writes (a POST, told apart by method, path and body) is stored
upstream, and its response is held until the client gives up. A client that retries without
an idempotency key then stores that write twice.

The draws come from one seeded generator, so a run's fault rates are reproducible; which
request meets which fault depends on the order requests arrive in. `tally` counts what was
injected. Run it standalone (`python -m memeval.testing.faultproxy --upstream URL`) in
front of any engine, or start it in a thread with `FaultProxy(...).running()`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from enum import StrEnum
from typing import TypeVar

import httpx
import uvicorn
from pydantic import BaseModel, Field, model_validator
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

SERVER_ERRORS = (500, 502, 503)
EDGE_STATUSES = (408, 499, 520, 522, 524)
MALFORMED: tuple[tuple[bytes, str], ...] = (
    (b'{"detail": "injected: cut o', "application/json"),
    (b"<html><body><h1>Bad gateway</h1>injected</body></html>", "text/html"),
    (b"", "application/json"),
)
T = TypeVar("T")
HOP_BY_HOP = frozenset(
    {"connection", "content-length", "host", "keep-alive", "transfer-encoding", "upgrade"}
)


class Fault(StrEnum):
    server_error = "server_error"
    throttled = "throttled"
    timeout = "timeout"
    dropped_write = "dropped_write"
    malformed = "malformed"
    edge_status = "edge_status"
    long_wait = "long_wait"
    lone_surrogate = "lone_surrogate"


class FaultPlan(BaseModel):
    """What to inject, as shares of all requests (of distinct writes for `drop_first_writes`)."""

    seed: int = 1
    server_error: float = Field(default=0.20, ge=0, le=1)
    throttled: float = Field(default=0.10, ge=0, le=1)
    timeout: float = Field(default=0.02, ge=0, le=1)
    drop_first_writes: float = Field(default=0.0, ge=0, le=1)
    malformed: float = Field(default=0.0, ge=0, le=1)
    edge_status: float = Field(default=0.0, ge=0, le=1)
    long_wait: float = Field(default=0.0, ge=0, le=1)
    lone_surrogate: float = Field(default=0.0, ge=0, le=1)
    long_waits: int = Field(default=3, ge=0, description="The most long waits injected.")
    long_retry_after: float = Field(
        default=120.0, ge=0, description="Seconds a long wait's Retry-After asks for."
    )
    after_upstream: float = Field(
        default=0.5, ge=0, le=1, description="Share of 5xx and timeouts injected after upstream."
    )
    retry_after: float = Field(
        default=1,
        ge=0,
        description="Seconds a 429 asks the client to wait: whole seconds by the RFC; a "
        "fraction (which memeval's transport reads) keeps tests quick.",
    )
    hold: float = Field(default=3.0, gt=0, description="Seconds a timed-out request is held.")

    @model_validator(mode="after")
    def _at_most_everything(self) -> FaultPlan:
        if sum(share for _, share in self.shares()) > 1:
            raise ValueError("the shares of all request faults together must not exceed 1")
        return self

    def shares(self) -> list[tuple[Fault, float]]:
        """Each request fault with its share, in the order a draw is read against them."""
        return [
            (Fault.server_error, self.server_error),
            (Fault.throttled, self.throttled),
            (Fault.timeout, self.timeout),
            (Fault.malformed, self.malformed),
            (Fault.edge_status, self.edge_status),
            (Fault.long_wait, self.long_wait),
            (Fault.lone_surrogate, self.lone_surrogate),
        ]


class Tally(BaseModel):
    """What the proxy did; `injected` by fault, `after_upstream` of them once it had answered."""

    requests: int = 0
    forwarded: int = 0
    injected: dict[Fault, int] = Field(default_factory=lambda: dict.fromkeys(Fault, 0))
    after_upstream: int = 0

    @property
    def faults(self) -> int:
        return sum(self.injected.values())

    def lines(self) -> list[str]:
        shares = ", ".join(
            f"{n} {fault.value} ({n / self.requests:.1%})"
            for fault, n in self.injected.items()
            if n and self.requests
        )
        return [
            f"requests seen: {self.requests}, forwarded upstream: {self.forwarded}",
            f"faults injected: {self.faults}" + (f": {shares}" if shares else ""),
            f"  of them after the upstream had handled the request: {self.after_upstream}",
        ]


class FaultProxy:
    """The proxy as an ASGI app (`app`), with its plan, its generator and its tally."""

    def __init__(self, upstream: str, plan: FaultPlan | None = None) -> None:
        self.upstream = upstream.rstrip("/")
        self.plan = plan or FaultPlan()
        self.tally = Tally()
        self._random = random.Random(self.plan.seed)
        self._writes_seen: set[str] = set()
        self._turns: dict[Fault, int] = {}  # which variant of a fault comes next
        self._client: httpx.AsyncClient | None = None
        self.app = Starlette(
            routes=[Route("/{path:path}", self._handle, methods=_METHODS)],
            lifespan=self._lifespan,
        )

    @asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient(base_url=self.upstream, timeout=60.0) as client:
            self._client = client
            yield
        self._client = None

    def _draw(self, request: Request, body: bytes) -> tuple[Fault | None, bool]:
        """The fault for this request (or None) and whether it comes after the upstream."""
        plan, draw = self.plan, self._random.random()
        late = self._random.random() < plan.after_upstream
        if request.method == "POST" and plan.drop_first_writes:
            fingerprint = hashlib.sha256(f"{request.url.path}\n".encode() + body).hexdigest()
            if fingerprint not in self._writes_seen:
                self._writes_seen.add(fingerprint)
                if self._random.random() < plan.drop_first_writes:
                    return Fault.dropped_write, True
        for fault, share in plan.shares():
            if draw < share:
                if fault is Fault.long_wait and self.tally.injected[fault] >= plan.long_waits:
                    return None, False
                return fault, late and fault not in BEFORE_ONLY
            draw -= share
        return None, False

    async def _handle(self, request: Request) -> Response:
        body = await request.body()
        self.tally.requests += 1
        fault, late = self._draw(request, body)
        if fault is Fault.lone_surrogate:
            reply = await self._forward(request, body)
            cut = _cut_emoji(reply)
            self.tally.injected[fault] += cut is not None
            return reply if cut is None else cut
        answer: Response | None = None
        if fault is None or late:
            answer = await self._forward(request, body)
        if fault is None:
            assert answer is not None
            return answer
        self.tally.injected[fault] += 1
        self.tally.after_upstream += late
        return await self._fail(fault)

    async def _forward(self, request: Request, body: bytes) -> Response:
        assert self._client is not None, "the proxy's lifespan has not started"
        self.tally.forwarded += 1
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        reply = await self._client.request(
            request.method,
            request.url.path,
            params=tuple(request.query_params.multi_items()),
            content=body,
            headers=headers,
        )
        kept = {k: v for k, v in reply.headers.items() if k.lower() not in HOP_BY_HOP}
        kept.pop("content-encoding", None)  # httpx has already decoded the body
        return Response(reply.content, status_code=reply.status_code, headers=kept)

    async def _fail(self, fault: Fault) -> Response:
        if fault is Fault.throttled:
            return JSONResponse(
                {"detail": "injected: slow down"},
                status_code=429,
                headers={"Retry-After": f"{self.plan.retry_after:g}"},
            )
        if fault is Fault.server_error:
            status = self._turn(fault, SERVER_ERRORS)
            return JSONResponse({"detail": "injected: server error"}, status_code=status)
        if fault is Fault.malformed:
            body, kind = self._turn(fault, MALFORMED)
            return Response(body, status_code=200, media_type=kind)
        if fault is Fault.edge_status:
            return JSONResponse(
                {"detail": "injected"}, status_code=self._turn(fault, EDGE_STATUSES)
            )
        if fault is Fault.long_wait:
            return JSONResponse(
                {"detail": "injected: down for maintenance"},
                status_code=503,
                headers={"Retry-After": f"{self.plan.long_retry_after:g}"},
            )
        await asyncio.sleep(self.plan.hold)  # the client has given up by now
        return JSONResponse({"detail": "injected: held past the timeout"}, status_code=504)

    def _turn(self, fault: Fault, variants: tuple[T, ...]) -> T:
        n = self._turns.get(fault, 0)
        self._turns[fault] = n + 1
        return variants[n % len(variants)]

    @contextmanager
    def running(self, port: int = 0) -> Iterator[str]:
        """Serve on 127.0.0.1 in a thread (a free port unless given); yields the proxy's URL."""
        server = uvicorn.Server(_config(self.app, port))
        thread = threading.Thread(target=server.run, name="faultproxy", daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the fault proxy did not start")
            time.sleep(0.01)
        bound = server.servers[0].sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{bound}"
        finally:
            server.should_exit = True
            thread.join(self.plan.hold + 10)


def _cut_emoji(reply: Response) -> Response | None:
    """`reply` with a lone high surrogate after each pack's `markdown`, or None when it is no
    JSON 200 holding one. Ids and hit texts are left whole: a client matches them exactly, so a
    changed one would be a different answer, not a broken one."""
    if reply.status_code != 200 or not reply.body:
        return None
    try:
        data = json.loads(bytes(reply.body))
    except ValueError:
        return None
    cut = 0

    def walk(value: object) -> object:
        nonlocal cut
        if isinstance(value, dict):
            out: dict[object, object] = {}
            for key, item in value.items():
                if key == "markdown" and isinstance(item, str) and item:
                    cut += 1
                    out[key] = item + "\n\ud83d"  # a line of its own, after the units
                else:
                    out[key] = walk(item)
            return out
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    body = json.dumps(walk(data)).encode()  # ASCII: the half pair travels as its escape
    if not cut:
        return None
    return Response(body, status_code=200, media_type="application/json")


_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
BEFORE_ONLY = frozenset({Fault.throttled, Fault.long_wait})  # a limiter answers these up front


def _config(app: Starlette, port: int) -> uvicorn.Config:
    # Held requests would keep a graceful shutdown waiting for as long as they are held.
    return uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fault-injecting proxy in front of an engine.")
    parser.add_argument("--upstream", required=True, help="The engine's base URL.")
    parser.add_argument("--port", type=int, default=8081, help="Port on 127.0.0.1.")
    defaults = FaultPlan()
    shares = (
        "server_error",
        "throttled",
        "timeout",
        "malformed",
        "edge_status",
        "long_wait",
        "lone_surrogate",
    )
    for name in ("seed", *shares, "drop_first_writes"):
        kind = int if name == "seed" else float
        parser.add_argument(
            f"--{name.replace('_', '-')}", type=kind, default=getattr(defaults, name)
        )
    parser.add_argument("--retry-after", type=float, default=defaults.retry_after)
    parser.add_argument("--long-retry-after", type=float, default=defaults.long_retry_after)
    parser.add_argument("--long-waits", type=int, default=defaults.long_waits)
    parser.add_argument("--hold", type=float, default=defaults.hold)
    args = vars(parser.parse_args(argv))
    upstream, port = args.pop("upstream"), args.pop("port")
    proxy = FaultProxy(upstream, FaultPlan(**args))
    print(f"proxying http://127.0.0.1:{port} -> {upstream} with {proxy.plan}", flush=True)
    try:
        uvicorn.Server(_config(proxy.app, port)).run()
    finally:
        print("\n".join(proxy.tally.lines()))


if __name__ == "__main__":
    main()
