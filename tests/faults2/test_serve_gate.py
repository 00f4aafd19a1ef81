"""`memeval serve` checks the token before it reads a body, caps the body's size, gives up on
a body that arrives too slowly, and takes a time only when it is written as one; on a real
server on 127.0.0.1, with raw sockets where a client library would hide what is sent."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import SecretStr

from memeval.engines.reference import ReferenceEngine
from memeval.server import create_app
from tests.adapters.fakes import running

TOKEN = "gate-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
WHEN = ("MemoryItem", "Turn", "SessionRequest", "QueryRequest", "ContextRequest")


@pytest.fixture
def url() -> Iterator[str]:
    app = create_app(ReferenceEngine(), SecretStr(TOKEN), max_body=64_000, body_timeout=1.0)
    with running(app) as served:
        yield served


def _raw(url: str, head: str, body: bytes, *, wait: float = 10.0) -> tuple[float, bytes]:
    """Send `head` and the start of `body`, never the rest; (seconds to the answer, answer)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=wait) as conn:
        start = time.monotonic()
        conn.sendall(head.encode() + b"\r\n" + body)
        answer = conn.recv(65536)
        return time.monotonic() - start, answer


def test_no_token_is_refused_before_the_body_is_read_or_parsed(url: str) -> None:
    bad = httpx.post(f"{url}/v1/tenants/a/memories", content=b"{not json",
                     headers={"Content-Type": "application/json"})  # fmt: skip
    assert bad.status_code == 401, bad.text  # was 422: the body was parsed first
    head = (
        "POST /v1/tenants/a/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {100 * 1024 * 1024}\r\n"
    )
    took, answer = _raw(url, head, b"x" * 1000)  # a 100 MB upload, one KB of it sent
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert took < 5, "the server waited for a body it should never read"


def test_a_body_over_the_cap_is_413_declared_or_chunked(url: str) -> None:
    head = (
        "POST /v1/tenants/a/memories HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Length: {100 * 1024 * 1024}\r\n"
    )
    _, answer = _raw(url, head, b"x" * 1000)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]

    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            yield b"x" * 10_000

    chunked = httpx.post(f"{url}/v1/tenants/a/memories", content=chunks(), headers=AUTH)
    assert chunked.status_code == 413 and "64,000 bytes" in chunked.json()["detail"]
    item = {"id": "m", "text": "x" * 50_000, "at": "2026-03-02T09:00:00Z"}
    fine = httpx.post(f"{url}/v1/tenants/a/memories", headers=AUTH, json=item)
    assert fine.status_code == 200, fine.text


def test_a_body_that_arrives_too_slowly_is_408(url: str) -> None:
    head = ("POST /v1/tenants/a/memories HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Length: 100\r\n")  # fmt: skip
    took, answer = _raw(url, head, b'{"id": "m"')  # ten of its hundred bytes, then nothing
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert 0.9 < took < 8, took


@pytest.mark.parametrize("at", [0, 1700000000, "0", "0000-01-01T00:00:00Z", "2026-03-02T09:00:60Z"])
def test_a_time_must_be_written_as_one(url: str, at: object) -> None:
    sent = httpx.post(f"{url}/v1/tenants/a/memories", headers=AUTH,
                      json={"id": "m", "text": "x", "at": at})  # fmt: skip
    assert sent.status_code == 422, sent.text
    assert "ISO 8601" in sent.text
    session = httpx.post(f"{url}/v1/tenants/a/sessions", headers=AUTH,
                         json={"agent": "a", "at": at})  # fmt: skip
    assert session.status_code == 422, session.text


def test_the_openapi_schema_states_the_time_rule_and_the_new_statuses(url: str) -> None:
    schema = httpx.get(f"{url}/openapi.json").json()
    for name in WHEN:
        props = schema["components"]["schemas"][name]["properties"]
        field = props.get("at") or props.get("as_of")
        subs = [field, *field.get("anyOf", [])]
        assert any(s.get("format") == "date-time" and "pattern" in s for s in subs), name
    responses = schema["paths"]["/v1/tenants/{tenant}/memories"]["post"]["responses"]
    assert {"401", "408", "413"} <= responses.keys()
