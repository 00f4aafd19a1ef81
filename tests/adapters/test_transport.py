"""The shared transport against a real server that fails on demand: what is retried, what
is infrastructure, what is refused, and that the key never shows.

The rule: a reply that is not the engine's well-formed answer is infrastructure (retried,
then the case rerun), a refusal is an error of the case, and a long Retry-After holds
everyone off. Before it, only 429/500/502/503/504 were retried: a cut, HTML or empty 200 and a
408, 499, 520, 522 or 524 failed the probe they met and were scored as the engine's miss."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from fastapi import FastAPI, Request
from pydantic import SecretStr

from memeval.engines.adapters.transport import RemoteError, Transport, retry_after
from memeval.errors import AuthRejected, EngineRefused, EngineUnavailable
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


HTML = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
FAULTS = {
    "cut-json-200": Fault(200, raw=b'{"ok": tr'),
    "html-200": Fault(200, raw=HTML, content_type="text/html"),
    "empty-200": Fault(200, raw=b""),
    "blank-200": Fault(200, raw=b"  \n"),
    "408": Fault(408),
    "499": Fault(499, raw=b""),
    "520": Fault(520, raw=HTML, content_type="text/html"),
    "522": Fault(522),
    "524": Fault(524, raw=b"timeout", content_type="text/plain"),
}


@pytest.mark.parametrize("kind", FAULTS)
def test_a_reply_that_is_not_an_answer_is_retried(url: str, wire: Wire, kind: str):
    wire.inject(FAULTS[kind])
    assert run(ping(transport(url))) == 200
    assert len(wire.calls("/ping")) == 2


@pytest.mark.parametrize("kind", ["html-200", "524"])
def test_once_retries_run_out_it_is_infrastructure_never_a_refusal(url, wire, kind):
    wire.inject(*[FAULTS[kind]] * 4)
    with pytest.raises(EngineUnavailable, match="after 4 attempts"):
        run(ping(transport(url)))


def test_a_503_the_vendor_marks_not_retriable_is_refused_at_once(url, wire):
    body = {"error_code": "SYNTHESIZER_UNCONFIGURED", "message": "no model", "retriable": False}
    wire.inject(Fault(503, body=body))
    with pytest.raises(RemoteError) as caught:
        run(ping(transport(url)))
    assert len(wire.calls("/ping")) == 1
    refused = caught.value
    assert isinstance(refused, EngineRefused)
    assert (refused.status, refused.code) == (503, "SYNTHESIZER_UNCONFIGURED")
    assert refused.signature == "fake GET 503 SYNTHESIZER_UNCONFIGURED"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"error_code": "SCOPE_FORBIDDEN"}, "SCOPE_FORBIDDEN"),
        ({"success": False, "errorCode": "VALIDATION_ERROR"}, "VALIDATION_ERROR"),
        ({"error": {"code": "bad_filter"}}, "bad_filter"),
    ],
)
def test_a_refusal_names_engine_route_status_and_the_vendors_code(url, wire, body, code):
    wire.inject(Fault(422, body=body))
    with pytest.raises(EngineRefused) as caught:
        run(ping(transport(url)))
    assert caught.value.code == code and caught.value.route == "GET /ping"
    assert f"fake: GET /ping answered 422 {code}" in str(caught.value)


def test_an_auth_refusal_is_also_an_engine_refusal(url, wire):
    with pytest.raises(AuthRejected) as caught:
        run(ping(transport(url, key="wrong-key")))
    assert isinstance(caught.value, EngineRefused)  # a case that meets it errors, unscored


def test_a_retry_after_within_the_limit_is_honoured_and_shared(url, wire):
    paused: list[float] = []
    t = transport(url, max_wait=5)

    async def pause(seconds: float) -> None:
        paused.append(seconds)

    t.pause = pause
    wire.inject(Fault(503, retry_after="1.5"))
    started = time.monotonic()
    assert run(ping(t)) == 200
    assert time.monotonic() - started >= 1.5
    assert paused == [1.5]  # a 503 asking for a wait holds everyone off too, not just a 429


def test_a_retry_after_past_the_limit_pauses_everyone_and_reruns_the_case(url, wire):
    paused: list[float] = []
    t = transport(url, max_wait=90)

    async def pause(seconds: float) -> None:
        paused.append(seconds)

    t.pause = pause
    wire.inject(Fault(429, retry_after="120"))
    started = time.monotonic()
    with pytest.raises(EngineUnavailable, match="asked to wait 120s, more than the 90s"):
        run(ping(t))
    assert time.monotonic() - started < 5  # not slept through, and not hammered either
    assert paused == [120.0] and len(wire.calls("/ping")) == 1
