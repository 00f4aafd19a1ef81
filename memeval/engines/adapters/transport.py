"""The one HTTP path every remote engine takes: timeouts, retries, clear errors, hidden keys.

Outcomes are sorted by what the farm should do with them:

- 429 and 5xx are retried here with exponential backoff, honouring Retry-After; connection
  errors and timeouts too. Once retries run out, any of them is `EngineUnavailable`: the
  service could not answer, which says nothing about its memory, so the farm retries the
  whole case on a fresh tenant instead of scoring a miss (a 500 is no exception: behind a
  proxy or a load balancer it is as often the front door's as the engine's). Every 429 also
  goes to `pause`, by default the hook the caller installed with `back_pressure` (the farm's
  global limiter): one worker sleeping alone would leave the others hammering the service.
- Every failed attempt is reported to `memeval.engines.attempts` with what it cost, the wait
  after it included, so the stopwatch times only the attempt that answered and the report
  counts the infrastructure errors a run met.
- 401 and 403 are `AuthRejected`, whose fix names the variable that holds the key: retrying
  cannot help, and every later case would fail the same way.
- 402 is `CreditsExhausted`: the account cannot pay, so the run stops instead of failing
  every remaining case one by one.
- Any other 4xx is a `RemoteError`.

The key lives in an `httpx.Auth` whose repr hides it and is masked out of every message this
module builds, so it reaches no log, exception or report.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Generator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import SecretStr

from memeval.engines.attempts import failed_attempt
from memeval.engines.base import CreditsExhausted, EngineUnavailable
from memeval.errors import MemevalError
from memeval.secrets import redact

log = logging.getLogger(__name__)

RETRIED = frozenset({429, 500, 502, 503, 504})
MAX_WAIT = 60.0  # a Retry-After longer than this is left to the farm's own case retry
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


class RemoteError(Exception):
    """The engine answered, but not with a result: scored as a failure of this call."""

    def __init__(self, message: str, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class AuthRejected(MemevalError):
    """401 or 403: the key is missing, wrong or out of credit; the fix names its variable."""

    exit_code = 2


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
    ) -> httpx.Response:
        """A successful (2xx) response, or one of this module's errors after the retries."""
        where = f"{method} {path}"
        attempt = 0
        while True:
            began = time.perf_counter()
            response, failure = await self._attempt(method, path, json, params, headers)
            if response is not None:
                if response.is_success:
                    return response
                self._raise_final(where, response)
            wait = self._wait(attempt, response)
            try:
                if response is not None and response.status_code == 429:
                    await self.pause(wait)  # before giving up too: the others should slow down
                if attempt >= self._retries:
                    raise self._exhausted(where, failure, response)
                if wait > MAX_WAIT:
                    raise EngineUnavailable(
                        f"{self.engine}: {where} {failure} and asked to wait {wait:g}s"
                    )
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
            finally:
                failed_attempt((time.perf_counter() - began) * 1000.0)
            attempt += 1

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

    def _raise_final(self, where: str, response: httpx.Response) -> None:
        """Statuses no retry can change."""
        status = response.status_code
        if status in (401, 403):
            what = "rejected the key" if self._key is not None else "needs a key"
            raise AuthRejected(
                f"{self.engine} {what}: {where} answered {status}{self._detail(response)}",
                fix=f"set {self.key_env} to a valid key (with credit left) for {self.base_url}",
            )
        if status == 402:  # out of credit: no later case can pass, so the run stops
            raise CreditsExhausted(
                f"{self.engine}: {where} answered 402{self._detail(response)}; "
                f"add credit to the account behind {self.key_env}"
            )
        if status not in RETRIED:
            raise RemoteError(
                f"{self.engine}: {where} answered {status}{self._detail(response)}",
                status,
                _body(response),
            )

    def _exhausted(
        self, where: str, failure: str, response: httpx.Response | None
    ) -> EngineUnavailable:
        message = f"{self.engine}: {where} {failure} after {self._retries + 1} attempts"
        return EngineUnavailable(message + (self._detail(response) if response else ""))

    def _wait(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            asked = retry_after(response.headers.get("retry-after"))
            if asked is not None:
                return asked
        return self._backoff * 2**attempt * random.uniform(0.5, 1.0)

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
