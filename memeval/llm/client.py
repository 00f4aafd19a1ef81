"""One OpenAI-compatible chat client over httpx: OpenRouter by default, any base URL works.

The key comes from the environment of the process that makes the call, so it never travels
in task messages, settings dumps or results. It lives only inside an `httpx.Auth` whose repr
hides it, and httpx itself masks the Authorization header in its reprs.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import httpx
from pydantic import BaseModel, SecretStr

from memeval.errors import MaybeBilled, Rejected, Unreachable
from memeval.llm.failures import KEY_VARS, auth_error, classify
from memeval.text import mended

OPENROUTER = "https://openrouter.ai/api/v1"
BASE_URL_VAR = "MEMEVAL_LLM_BASE_URL"
TIMEOUT_VAR = "MEMEVAL_MODEL_TIMEOUT"
DEFAULT_TIMEOUT_S = 60.0
UNSENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)
"""Failures before a byte of the request left: the service cannot have billed these."""


def default_base_url() -> str:
    return os.environ.get(BASE_URL_VAR) or OPENROUTER


def is_openrouter(base_url: str) -> bool:
    return httpx.URL(base_url).host == "openrouter.ai"


def read_key() -> tuple[SecretStr | None, str]:
    """(key, the variable it came from); a key-less local server gets (None, first name)."""
    for name in KEY_VARS:
        value = os.environ.get(name, "").strip()
        if value:
            return SecretStr(value), name
    return None, KEY_VARS[0]


class _Bearer(httpx.Auth):
    def __init__(self, key: SecretStr) -> None:
        self._key = key

    def __repr__(self) -> str:
        return "_Bearer(***)"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
        yield request


class Completion(BaseModel):
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # usage.cost when the service reports it
    truncated: bool = False  # stopped by max_tokens (finish_reason `length`)


class KeyInfo(BaseModel):
    """The fields of OpenRouter's GET /key that bear on a budget, in USD."""

    label: str = ""
    limit: float | None = None
    limit_remaining: float | None = None
    usage: float = 0.0


class ModelPrice(BaseModel):
    """One entry of GET /models: prices are USD per token, as decimal strings."""

    id: str
    prompt: str | None = None
    completion: str | None = None


class LlmClient:
    def __init__(
        self,
        base_url: str | None = None,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        require_key: bool = True,
    ) -> None:
        """`require_key=False` is for the public endpoints (the model list) alone."""
        key, self.env_var = read_key()
        self.base_url = (base_url or default_base_url()).rstrip("/")
        if key is None and require_key and is_openrouter(self.base_url):
            raise auth_error("no key for OpenRouter", self.env_var)
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            auth=_Bearer(key) if key is not None else None,
            timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)),
            headers={"X-Title": "memeval"},
        )

    def __repr__(self) -> str:
        return f"LlmClient(base_url={self.base_url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()

    async def chat(
        self, model: str, messages: list[dict[str, str]], *, max_tokens: int
    ) -> Completion:
        """One attempt at temperature 0. Raises a typed `LlmError`; retrying is the caller's
        job, because each retry must pass the rate limiter and the budget again."""
        payload = {
            "model": model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": max_tokens,
        }
        body = await self._request("POST", "/chat/completions", json=payload)
        if isinstance(body.get("error"), dict):  # an error raised after the 200 was sent
            code = body["error"].get("code")
            status = code if isinstance(code, int) and code >= 400 else 502
            raise classify(status, body, None, env_var=self.env_var)
        try:
            choice = body["choices"][0]
            usage = body.get("usage") or {}
            return Completion(
                text=str(choice["message"].get("content") or "").strip(),
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                cost_usd=float(usage["cost"]) if usage.get("cost") is not None else None,
                truncated=choice.get("finish_reason") == "length",
            )
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            # A 200 is a billed answer even when it cannot be read: it counts at its hold.
            raise MaybeBilled(f"malformed completion: {type(exc).__name__}: {exc}") from None

    async def key_info(self) -> KeyInfo | None:
        """The key's limits, or None where the server has no such endpoint (not OpenRouter)."""
        try:
            body = await self._request("GET", "/key")
        except Rejected:
            return None
        return KeyInfo.model_validate(body.get("data") or {})

    async def models(self) -> list[ModelPrice]:
        body = await self._request("GET", "/models")
        out: list[ModelPrice] = []
        for entry in body.get("data") or []:
            if isinstance(entry, dict) and "id" in entry:
                pricing = entry.get("pricing") or {}
                out.append(
                    ModelPrice(
                        id=str(entry["id"]),
                        prompt=_text(pricing.get("prompt")),
                        completion=_text(pricing.get("completion")),
                    )
                )
        return out

    async def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = await self._http.request(method, path, **kwargs)
        except UNSENT as exc:
            raise Unreachable(
                f"{method} {path} failed: {type(exc).__name__}", url=str(self._http.base_url)
            ) from None
        except httpx.TimeoutException:
            raise MaybeBilled(f"{method} {path} timed out", status=408) from None
        except httpx.TransportError as exc:
            raise MaybeBilled(f"{method} {path} failed: {type(exc).__name__}") from None
        try:
            body: Any = mended(response.json())  # a lone surrogate is mended, not a crash later
        except ValueError:
            body = None
        if response.status_code >= 400:
            raise classify(
                response.status_code,
                body,
                _retry_after(response.headers.get("retry-after")),
                env_var=self.env_var,
            )
        if not isinstance(body, dict):  # answered, maybe billed, unreadable: counted at the hold
            raise MaybeBilled(f"{method} {path} answered {response.status_code} without JSON")
        return body


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header; the HTTP-date form is rare here and read as absent."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
