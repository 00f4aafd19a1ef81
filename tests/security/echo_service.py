"""A model service on 127.0.0.1 that speaks OpenRouter's wire and quotes the caller's key back.

Several real services and proxies put the request's `Authorization` header into their error
bodies. This one answers chat calls from a fixed rotation of outcomes, OpenRouter's error shape
`{"error": {"code", "message", "metadata"}}` on each failure (429 with Retry-After, 500, 502,
503, 401, an error inside a 200), each message echoing the header in a different form: the
header line, a dict of request headers, the bare key. Successes answer `unknown`, like a model
that never guesses. GET /models (prices) and GET /key (limits) answer as OpenRouter does.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "test/echo"
ROTATION = (0, 503, 500, 502, 503, 429, 200, 401, 0, 429, 500, 502, 429, 503, 200)
"""Statuses in the order calls meet them; 0 is an error inside an HTTP 200. Six failures in a
row exhaust the answerer's attempts, so each run of them ends as a stored error: the first
naming the 429, the second the 503. Every HTTP failure asks for a 10 ms pause (Retry-After);
the in-200 error cannot, so it comes first, where the answerer's own back-off is shortest."""


class EchoService:
    def __init__(self) -> None:
        self.seen: Counter[int] = Counter()
        self.authorizations: set[str] = set()
        self._next = itertools.cycle(ROTATION)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/v1"

    def __enter__(self) -> EchoService:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def chat(self, headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        authorization = headers.get("Authorization", "")
        key = authorization.removeprefix("Bearer ")
        with self._lock:
            status = next(self._next)
            self.seen[status] += 1
            self.authorizations.add(authorization)
        if status == 200:
            choice = {"index": 0, "finish_reason": "stop", "message": {"content": "unknown"}}
            usage = {"prompt_tokens": 40, "completion_tokens": 2, "total_tokens": 42, "cost": 0}
            return 200, {"id": "gen-ok", "model": MODEL, "choices": [choice], "usage": usage}, {}
        said = {
            429: f"Rate limit exceeded for key {key}",
            401: f"Invalid credentials in header 'Authorization: {authorization}'",
            500: f"upstream failed; request headers were {headers!r}",
            502: f"bad gateway (Authorization: {authorization})",
            503: f"no provider for {json.dumps({'authorization': authorization})}",
            0: f"provider disconnected while serving {authorization}",
        }[status]
        error = {"code": status or 502, "message": said, "metadata": {"echo": authorization}}
        if status == 0:
            choice = {"index": 0, "finish_reason": "error", "message": {"content": ""}}
            return 200, {"id": "gen-err", "model": MODEL, "error": error, "choices": [choice]}, {}
        return status, {"error": error}, {"Retry-After": "0.01"}


def _handler(service: EchoService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/api/v1/models":
                price = {"prompt": "0.000001", "completion": "0.000002"}
                self._send(200, {"data": [{"id": MODEL, "pricing": price}]}, {})
            elif self.path == "/api/v1/key":
                data = {"label": "echo", "limit": None, "limit_remaining": None, "usage": 0}
                self._send(200, {"data": data}, {})
            else:
                self._send(404, {"error": {"code": 404, "message": "not found"}}, {})

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path != "/api/v1/chat/completions":
                self._send(404, {"error": {"code": 404, "message": "not found"}}, {})
                return
            self._send(*service.chat(dict(self.headers.items())))

    return Handler
