"""A small OpenAI-compatible server on 127.0.0.1 that behaves like OpenRouter, faults included.

It answers extractively from the pack in the prompt (so grading has something real to grade),
reports `usage.cost` in USD like OpenRouter, and serves GET /key and GET /models. Faults are
queued with `inject` and consumed one per chat call: 429 with Retry-After, 402 (in-flight or
hard), 403, 408, 5xx, slow replies, an error inside an HTTP 200, and a billed 200 whose JSON
is cut short.

Its billing log (`calls`, with each request's arrival time in `arrivals`) is the truth the
budget tests measure against. Like a real service it bills a slow reply whose client has
already hung up, and it stops a completion at `max_tokens` with `finish_reason: length`.
Models named `openai/...` count prompt tokens as OpenAI documents for its chat models (the
`o200k_base` encoding, three tokens per message plus its role, three priming the reply); the
others count a token per four characters. `surcharge_micros` makes it bill more than its prices
say, as a service with a stale price list would.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memeval.scoring.pack import extractive_answer, units

KEY = "sk-or-v1-test-key"
CUT_HEADER = "x-fake-cut"
"""Between `chat` and the handler only: the reply is cut in half on the wire."""
PACK = re.compile(r"<pack>\n(.*)\n</pack>", re.S)
JUDGED = re.compile(r"Gold answer: (.*)\nAnswer to grade: (.*)", re.S)
QUESTION = re.compile(r"Question: (.*)$", re.S)


@dataclass
class Fault:
    status: int  # 200 with `error200`, else the HTTP status to answer
    retry_after: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (a slow reply)
    error200: bool = False
    cut: bool = False  # billed in full, then only the first half of its JSON is sent


def in_flight(retry_after: float = 0.05) -> Fault:
    return Fault(
        402,
        retry_after=retry_after,
        metadata={
            "reason": "in_flight_budget_exhausted",
            "limit_source": "openrouter_in_flight_budget",
        },
    )


def hard_402() -> Fault:
    return Fault(402, metadata={"limit_source": "openrouter_credits"})


@dataclass
class Call:
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_micros: int
    authorization: str
    max_tokens: int = 0
    arrived: float = 0.0  # time.monotonic() when the request came in


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a service's backlog: the default 5 refuses a crowd of callers


class FakeOpenRouter:
    """Prices are integer micro-USD per token, so every cost is exact in micro-USD."""

    def __init__(
        self,
        *,
        prices: dict[str, tuple[int, int]] | None = None,
        key: str | None = KEY,
        limit_remaining: float | None = None,
        delay: float = 0.0,
        surcharge_micros: int = 0,
    ) -> None:
        self.prices = prices or {"test/cheap": (1, 2), "test/dear": (3, 6)}
        self.surcharge_micros = surcharge_micros
        self.arrivals: list[float] = []
        self.key = key
        self.limit_remaining = limit_remaining
        self.delay = delay
        self.faults: deque[Fault] = deque()
        self.calls: list[Call] = []
        self.script: Callable[[str, list[dict[str, str]]], str | None] | None = None
        """Scripted replies: given (model, messages), a reply, or None to answer as usual."""
        self.seen: list[tuple[str, list[dict[str, str]]]] = []  # every chat's model and messages
        self.attempts = 0
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/v1"

    @property
    def billed_micros(self) -> int:
        with self.lock:
            return sum(c.cost_micros for c in self.calls)

    def inject(self, *faults: Fault) -> None:
        with self.lock:
            self.faults.extend(faults)

    def __enter__(self) -> FakeOpenRouter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # ---- behaviour ----------------------------------------------------------------------

    def _authorized(self, header: str) -> bool:
        return self.key is None or header == f"Bearer {self.key}"

    def chat(
        self, body: dict[str, Any], authorization: str, arrived: float
    ) -> tuple[int, dict[str, Any], dict]:
        with self.lock:
            self.attempts += 1
            self.arrivals.append(arrived)
            fault = self.faults.popleft() if self.faults else None
        time.sleep(fault.delay if fault else self.delay)
        if fault is not None and (fault.status != 200 or fault.error200):
            return _fault_reply(fault)
        model = body["model"]
        if model not in self.prices:
            return 400, {"error": {"code": 400, "message": f"{model} is not a valid model ID"}}, {}
        prompt_tokens = _prompt_tokens(model, body["messages"])
        with self.lock:
            self.seen.append((model, body["messages"]))
        scripted = self.script(model, body["messages"]) if self.script is not None else None
        answer = scripted if scripted is not None else _answer(body["messages"][-1]["content"])
        completion_tokens = math.ceil(len(answer) / 4) + 1
        finish = "stop"
        if completion_tokens > body["max_tokens"]:
            completion_tokens, finish = body["max_tokens"], "length"
            answer = answer[: 4 * max(0, completion_tokens - 1)]
        p, c = self.prices[model]
        cost = prompt_tokens * p + completion_tokens * c + self.surcharge_micros
        call = Call(
            model,
            prompt_tokens,
            completion_tokens,
            cost,
            authorization,
            max_tokens=body["max_tokens"],
            arrived=arrived,
        )
        with self.lock:
            self.calls.append(call)
        return (
            200,
            {
                "id": "gen-1",
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": finish,
                        "message": {"role": "assistant", "content": answer},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                    "cost": cost / 1e6,
                },
            },
            {CUT_HEADER: "1"} if fault is not None and fault.cut else {},
        )

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict) -> None:
                data = json.dumps(body).encode()
                if headers.pop(CUT_HEADER, None):
                    data = data[: len(data) // 2]
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            def _unauthorized(self) -> bool:
                if fake._authorized(self.headers.get("Authorization", "")):
                    return False
                self._send(
                    401, {"error": {"code": 401, "message": "No auth credentials found"}}, {}
                )
                return True

            def do_GET(self) -> None:
                if self.path == "/api/v1/models":
                    data = [
                        {
                            "id": m,
                            "pricing": {"prompt": f"{p / 1e6:.6f}", "completion": f"{c / 1e6:.6f}"},
                        }
                        for m, (p, c) in fake.prices.items()
                    ]
                    data.append(
                        {"id": "openrouter/auto", "pricing": {"prompt": "-1", "completion": "-1"}}
                    )
                    self._send(200, {"data": data}, {})
                elif self.path == "/api/v1/key":
                    if self._unauthorized():
                        return
                    remaining = fake.limit_remaining
                    self._send(
                        200,
                        {
                            "data": {
                                "label": "test",
                                "limit": remaining,
                                "limit_remaining": remaining,
                                "usage": 0,
                            }
                        },
                        {},
                    )
                else:
                    self._send(404, {"error": {"code": 404, "message": "not found"}}, {})

            def do_POST(self) -> None:
                arrived = time.monotonic()  # before reading the body: when the request came
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                if self.path != "/api/v1/chat/completions":
                    self._send(404, {"error": {"code": 404, "message": "not found"}}, {})
                    return
                if self._unauthorized():
                    return
                authorization = self.headers.get("Authorization", "")
                status, reply, headers = fake.chat(body, authorization, arrived)
                self._send(status, reply, headers)

        return Handler


def _fault_reply(fault: Fault) -> tuple[int, dict[str, Any], dict]:
    headers = {} if fault.retry_after is None else {"Retry-After": f"{fault.retry_after:g}"}
    if fault.error200:
        return (
            200,
            {
                "id": "gen-err",
                "model": "x",
                "error": {
                    "code": fault.status if fault.status != 200 else 502,
                    "message": "provider disconnected",
                    "metadata": {"error_type": "provider_unavailable"},
                },
                "choices": [{"index": 0, "finish_reason": "error", "message": {"content": ""}}],
            },
            headers,
        )
    message = {402: "Insufficient credits", 429: "Rate limit exceeded"}.get(fault.status, "failed")
    body = {"error": {"code": fault.status, "message": message, "metadata": fault.metadata}}
    return fault.status, body, headers


def busiest_window(times: list[float], seconds: float = 1.0) -> int:
    """The most arrivals in any window of `seconds` (half-open), sliding over every arrival."""
    ordered = sorted(times)
    return max(
        (bisect.bisect_left(ordered, t + seconds) - i for i, t in enumerate(ordered)), default=0
    )


@cache
def _o200k() -> Any:
    import bpe_openai  # half a second of import, paid by the tests that count tokens only

    return bpe_openai.get_encoding("o200k_base")  # builds its tables anew on every call


def _prompt_tokens(model: str, chat: list[dict[str, str]]) -> int:
    if model.startswith("openai/"):
        encoding = _o200k()
        per_message = (3 + len(encoding.encode_ordinary(m["role"])) for m in chat)
        content = (len(encoding.encode_ordinary(m["content"])) for m in chat)
        return sum(per_message) + sum(content) + 3
    text = "".join(m["content"] for m in chat)
    return math.ceil(len(text) / 4) + 4 * len(chat)


def _answer(user: str) -> str:
    """The pack line that best matches the question, or `unknown`: a model that never guesses.
    Asked to judge (`memeval.llm.judge`), it calls an answer right when it holds every word of
    the gold answer."""
    judged = JUDGED.search(user)
    if judged is not None:
        gold, given = (set(re.findall(r"\w+", part.casefold())) for part in judged.groups())
        return "CORRECT" if gold <= given else "WRONG"
    pack = PACK.search(user)
    question = QUESTION.search(user)
    if pack is None or question is None:
        return "unknown"
    best = extractive_answer(units(pack.group(1)), question.group(1))
    return best.lstrip("- ").strip() or "unknown"
