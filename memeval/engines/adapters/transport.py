"""The one HTTP path every remote engine takes: timeouts, retries, clear errors, hidden keys.

Every response is sorted here, by one rule, into what the farm should do with it:

- **answered**: a 2xx whose body is the engine's well-formed JSON (or a 204). Only this is
  handed to the adapter, and only what an adapter makes of it is ever scored.
- **transient**: the service, or something in front of it, could not answer. Connection
  errors, timeouts, 408, 425, 429, 499 and every 5xx but 501 (the 520-524 a CDN answers
  included), and a 2xx whose body is cut off, an HTML page or empty. Retried here with
  exponential backoff, honouring Retry-After up to `max_wait` seconds; once retries run out
  it is `EngineUnavailable`, and the farm reruns the whole case on a fresh tenant instead of
  scoring a miss. A Retry-After longer than `max_wait` is not hammered through: it goes to
  `pause` (the farm's shared limiter, so every worker holds off) and the case is rerun later.
- **refused**: any other 4xx, and a 503 the vendor marks `retriable: false`: retrying sends
  the same refused call. It is `EngineRefused` (a `RemoteError`, naming engine, route, status
  and the vendor's error code): an error of the case, never a score. Adapters catch the few a
  vendor documents as an answer (a 404 "nothing here", a 409 "already stored"). 401 and 403
  are `AuthRejected`, whose fix names the key's variable; 402 is `CreditsExhausted`, worded
  for both of its readings (no credit left, or a feature the key's tier lacks).

Every failed attempt is reported to `memeval.engines.attempts` with what it cost, the wait
after it included, so the stopwatch times only the attempt that answered and the report
counts the infrastructure errors a run met.

The key lives in an `httpx.Auth` whose repr hides it and is masked out of every message this
module builds, so it reaches no log, exception or report.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Collection, Generator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import SecretStr

from memeval.engines.attempts import failed_attempt
from memeval.errors import AuthRejected, CreditsExhausted, EngineRefused, EngineUnavailable
from memeval.secrets import redact

log = logging.getLogger(__name__)

TRANSIENT_4XX = frozenset({408, 425, 429, 499})  # timeouts, too early, throttled, client gone
NOT_CONFIGURED = frozenset({"SYNTHESIZER_UNCONFIGURED", "STORAGE_UNWIRED", "ANSWER_UNAVAILABLE"})
"""503 codes CortexDB's SDK maps to "never retriable: the operator has to configure it"."""
MAX_WAIT = 300.0  # default: a longer Retry-After pauses everyone and reruns the case later
MASK = "***"

Pause = Callable[[float], Awaitable[object]]

_HOLD: ContextVar[Pause | None] = ContextVar("memeval_engine_hold", default=None)


@contextmanager
def back_pressure(pause: Pause) -> Iterator[None]:
    """Pass every 429 met by the calls run inside to `pause`, with the wait the engine asked for.

    A context variable, not a field of the transport: one engine and its transport serve
    several cases at once, each behind its own limiter connection, and each asyncio task sees
    only the hook of the call it runs. Engines stay free of Redis; the farm supplies the hook.
    """
    token = _HOLD.set(pause)
    try:
        yield
    finally:
        _HOLD.reset(token)


async def pass_back(seconds: float) -> None:
    """`Transport.pause` unless overridden: the running call's `back_pressure` hook, if any."""
    hold = _HOLD.get()
    if hold is None:
        return
    try:
        await hold(seconds)
    except Exception as exc:  # telling the others is a courtesy: the call itself goes on
        log.warning("could not pass a %gs back-off to the shared limiter: %s", seconds, exc)


class RemoteError(EngineRefused):
    """The engine answered, but not with a result: an error of the case, never a score."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        body: Any = None,
        *,
        engine: str = "",
        route: str = "",
    ) -> None:
        super().__init__(message, engine=engine, route=route, status=status, code=vendor_code(body))
        self.body = body


def transient(status: int) -> bool:
    """Whether a status says the answer may differ on a retry: see the module's rule."""
    return status in TRANSIENT_4XX or (500 <= status <= 599 and status != 501)


def vendor_code(body: Any) -> str | None:
    """The vendor's own error code, in the shapes the seed engines use (CortexDB's
    `error_code`, TinyHumans' `errorCode`, a nested `error.code`)."""
    if not isinstance(body, dict):
        return None
    nested = body.get("error")
    for found in (
        body.get("error_code"),
        body.get("errorCode"),
        body.get("code"),
        nested.get("code") if isinstance(nested, dict) else None,
    ):
        if isinstance(found, str | int) and str(found):
            return str(found)
    return None


class KeyAuth(httpx.Auth):
    """`Authorization: <scheme> <key>` on every request; its repr never shows the key."""

    def __init__(self, key: SecretStr, scheme: str = "Bearer") -> None:
        self._key = key
        self._scheme = scheme

    def __repr__(self) -> str:
        return f"KeyAuth({self._scheme} {MASK})"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"{self._scheme} {self._key.get_secret_value()}"
        yield request


class Transport:
    """An `httpx.AsyncClient` made on first use, so it belongs to the loop that uses it."""

    def __init__(
        self,
        base_url: str,
        *,
        engine: str,
        key: SecretStr | None,
        key_env: str,
        scheme: str = "Bearer",
        timeout: float = 30.0,
        retries: int = 4,
        backoff: float = 0.5,
        max_wait: float = MAX_WAIT,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.base_url = base_url
        self.engine = engine
        self.key_env = key_env
        self.headers = dict(headers or {})
        self.pause: Pause = pass_back  # told how long each 429 asked everyone to wait
        self._key = key
        self._auth = KeyAuth(key, scheme) if key is not None else None
        self._timeout = httpx.Timeout(timeout, connect=min(timeout, 10.0))
        self._retries = retries
        self._backoff = backoff
        self._max_wait = max_wait
        self._client: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        return f"Transport({self.engine} at {self.base_url})"

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        expect_json: bool = True,
        accept: Collection[int] = (),
    ) -> httpx.Response:
        """An answered response, or one of this module's errors after the retries.
        `expect_json=False` for a caller that reads other bodies (an MCP event stream);
        `accept`: statuses the vendor documents as an answer on this route (CortexDB's 408
        `WAIT_TIMEOUT`: stored, not yet indexed), returned as they are."""
        where = f"{method} {path}"
        attempt = 0
        while True:
            began = time.perf_counter()
            response, failure = await self._attempt(method, path, json, params, headers)
            if response is not None and response.status_code in accept:
                return response
            if response is not None:
                verdict = self._verdict(where, response, expect_json)
                if verdict is None:
                    return response
                failure = verdict
            try:
                await self._hold_off(where, failure, attempt, response)
            finally:
                failed_attempt((time.perf_counter() - began) * 1000.0)
            attempt += 1

    async def _hold_off(
        self, where: str, failure: str, attempt: int, response: httpx.Response | None
    ) -> None:
        """Wait before the next attempt, or give up with `EngineUnavailable`. A wait the
        service asked for goes to `pause` first (before giving up too): one worker sleeping
        alone would leave the others hammering it."""
        asked = retry_after(response.headers.get("retry-after")) if response else None
        wait = asked if asked is not None else self._backoff * 2**attempt * random.uniform(0.5, 1)
        if asked is not None or (response is not None and response.status_code == 429):
            await self.pause(wait)
        if asked is not None and asked > self._max_wait:
            raise EngineUnavailable(
                f"{self.engine}: {where} {failure} and asked to wait {asked:g}s, more than the "
                f"{self._max_wait:g}s one call waits; every worker holds off, and the case "
                "is rerun later"
            )
        if attempt >= self._retries:
            raise self._exhausted(where, failure, response)
        log.warning(
            "%s: %s %s; retry %d of %d in %.2fs",
            self.engine,
            where,
            failure,
            attempt + 1,
            self._retries,
            wait,
        )
        await asyncio.sleep(wait)

    async def _attempt(
        self,
        method: str,
        path: str,
        json: Any,
        params: dict[str, Any] | None,
        headers: dict[str, str] | None,
    ) -> tuple[httpx.Response | None, str]:
        """One try: the response, or None and what went wrong on the way."""
        if self._client is None:
            self._client = httpx.AsyncClient(base_url=self.base_url, timeout=self._timeout)
        try:
            response = await self._client.request(
                method,
                path,
                json=json,
                params=params,
                headers={**self.headers, **(headers or {})},
                auth=self._auth,
            )
        except httpx.TimeoutException:
            return None, "timed out"
        except httpx.ConnectError as exc:
            return None, f"could not connect ({type(exc).__name__})"
        except httpx.RequestError as exc:  # reset, cut off mid-body, garbled
            return None, f"lost the exchange ({type(exc).__name__})"
        return response, f"answered {response.status_code}"

    def _verdict(self, where: str, response: httpx.Response, expect_json: bool) -> str | None:
        """The module's one rule: None for an answer, what went wrong for a transient
        failure; a refusal is raised."""
        status = response.status_code
        if response.is_success:
            if not expect_json or status == 204:
                return None
            if not response.content.strip():
                return f"answered {status} with an empty body"
            try:
                response.json()
            except ValueError:
                kind = response.headers.get("content-type", "no content type").split(";")[0]
                return f"answered {status} with a body that is not JSON ({kind}: cut or a page)"
            return None
        body = _body(response)
        code = vendor_code(body)
        if status in (401, 403):
            what = "rejected the key" if self._key is not None else "needs a key"
            if status == 403 and self._key is not None:
                what = "refused the call for this key"
            rejected = AuthRejected(
                f"{self.engine} {what}: {where} answered {status}{f' {code}' if code else ''}"
                f"{self._detail(response)}",
                fix=f"set {self.key_env} to a valid key (with credit left, and the rights this "
                f"call needs) for {self.base_url}",
            )
            rejected.engine, rejected.route, rejected.status, rejected.code = (
                self.engine,
                where,
                status,
                code,
            )
            raise rejected
        if status == 402:  # the run stops, unless the adapter called something optional
            raise CreditsExhausted(
                f"{self.engine}: {where} answered 402{f' {code}' if code else ''}: the account "
                f"behind {self.key_env} is out of credit, or the call is not on its tier"
                f"{self._detail(response)}"
            )
        settled = code in NOT_CONFIGURED or (
            isinstance(body, dict) and body.get("retriable") is False
        )
        if transient(status) and not settled:
            return f"answered {status}"
        raise RemoteError(
            f"{self.engine}: {where} answered {status}{f' {code}' if code else ''}"
            f"{self._detail(response)}",
            status,
            body,
            engine=self.engine,
            route=where,
        )

    def _exhausted(
        self, where: str, failure: str, response: httpx.Response | None
    ) -> EngineUnavailable:
        message = f"{self.engine}: {where} {failure} after {self._retries + 1} attempts"
        return EngineUnavailable(message + (self._detail(response) if response else ""))

    def _detail(self, response: httpx.Response) -> str:
        text = response.text.strip().replace("\n", " ")
        return f": {redact(self.mask(text))[:300]}" if text else ""  # masked whole, then cut

    def mask(self, text: str) -> str:
        if self._key is not None:
            secret = self._key.get_secret_value()
            if secret:
                text = text.replace(secret, MASK)
        return text


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header, in either of its forms (seconds or an HTTP date)."""
    if value is None or not value.strip():
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text
