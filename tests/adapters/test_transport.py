"""The shared transport against a real server that fails on demand: what is retried, what
is infrastructure, what is the engine's failure, and that the key never shows."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from fastapi import FastAPI, Request
from pydantic import SecretStr

from memeval.engines.adapters.transport import AuthRejected, RemoteError, Transport, retry_after
from memeval.engines.base import EngineUnavailable
from tests.adapters.conftest import run
from tests.adapters.fakes import Fault, Wire, bearer, record, running

KEY = "tr-secret-key-0001"


@pytest.fixture
def wire() -> Wire:
    return Wire()


@pytest.fixture
def url(wire: Wire) -> Iterator[str]:
    app = FastAPI()
    record(app, wire)

    @app.get("/ping")
    async def ping(request: Request) -> object:
        return bearer(request, KEY) or {"ok": True}

    with running(app) as base:
        yield base


def transport(url: str, key: str = KEY, **kw: float) -> Transport:
    options = {"timeout": 2.0, "retries": 3, "backoff": 0.01, **kw}
    return Transport(
        url,
        engine="fake",
        key=SecretStr(key),
        key_env="FAKE_API_KEY",
        **options,  # type: ignore[arg-type]
    )


async def ping(t: Transport) -> int:
    try:
        return (await t.call("GET", "/ping")).status_code
    finally:
        await t.aclose()


def test_429_waits_for_retry_after_then_succeeds(url: str, wire: Wire):
    paused: list[float] = []
    t = transport(url)

    async def pause(seconds: float) -> None:
        paused.append(seconds)

    t.pause = pause
    wire.inject(Fault(429, retry_after="0.3"))
    started = time.monotonic()
    assert run(ping(t)) == 200
    assert time.monotonic() - started >= 0.3
    assert len(wire.calls("/ping")) == 2
    assert paused == [0.3]  # the global limiter is told to hold everyone as long


def test_5xx_is_retried_until_it_succeeds(url: str, wire: Wire):
    wire.inject(Fault(502), Fault(500), Fault(503))
    assert run(ping(transport(url))) == 200
    assert len(wire.calls("/ping")) == 4


def test_unavailable_after_retries_is_infrastructure(url: str, wire: Wire):
    wire.inject(*[Fault(503)] * 4)
    with pytest.raises(EngineUnavailable, match="answered 503 after 4 attempts"):
        run(ping(transport(url)))


def test_500_after_retries_is_infrastructure_too(url: str, wire: Wire):
    wire.inject(*[Fault(500, body={"error": "boom"})] * 4)
    with pytest.raises(EngineUnavailable, match=r"answered 500 after 4 attempts: .*boom"):
        run(ping(transport(url)))


def test_other_4xx_is_not_retried(url: str, wire: Wire):
    wire.inject(Fault(400, body={"error": "bad request"}))
    with pytest.raises(RemoteError, match="400"):
        run(ping(transport(url)))
    assert len(wire.calls("/ping")) == 1


@pytest.mark.parametrize(("key", "status"), [("wrong-key", 401), ("spent-key", 403)])
def test_auth_errors_name_the_variable_and_are_not_retried(url, wire, key, status):
    with pytest.raises(AuthRejected) as caught:
        run(ping(transport(url, key=key)))
    assert str(status) in caught.value.message
    assert "FAKE_API_KEY" in caught.value.fix
    assert key not in caught.value.render()
    assert len(wire.calls("/ping")) == 1


def test_timeouts_become_unavailable(url: str, wire: Wire):
    wire.inject(*[Fault(0, delay=0.6)] * 2)
    with pytest.raises(EngineUnavailable, match="timed out after 2 attempts"):
        run(ping(transport(url, timeout=0.2, retries=1)))


def test_a_slow_reply_within_the_retries_succeeds(url: str, wire: Wire):
    wire.inject(Fault(0, delay=0.6))
    assert run(ping(transport(url, timeout=0.2, retries=1))) == 200


def test_connection_refused_becomes_unavailable():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once it closes
    with pytest.raises(EngineUnavailable, match="could not connect"):
        run(ping(transport(f"http://127.0.0.1:{port}", retries=1)))


def test_a_long_retry_after_is_left_to_the_farm(url: str, wire: Wire):
    wire.inject(Fault(429, retry_after="3600"))
    started = time.monotonic()
    with pytest.raises(EngineUnavailable, match="asked to wait 3600s"):
        run(ping(transport(url)))
    assert time.monotonic() - started < 2


def test_the_key_never_shows(url: str, wire: Wire):
    t = transport(url)
    assert KEY not in repr(t) and KEY not in repr(t._auth)
    wire.inject(Fault(400, body={"error": f"unknown key {KEY}"}))
    with pytest.raises(RemoteError) as caught:
        run(ping(t))
    assert KEY not in str(caught.value) and "***" in str(caught.value)
    assert wire.seen[0].headers["authorization"] == f"Bearer {KEY}"  # it was sent, though


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after("2.5") == 2.5
    assert retry_after(None) is None and retry_after("soon") is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < (retry_after(later) or 0) <= 30
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    assert retry_after(past) == 0
