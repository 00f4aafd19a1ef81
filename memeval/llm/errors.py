"""What can go wrong calling a model, typed by what the caller must do about it.

OpenRouter documents its errors as `{"error": {"code", "message", "metadata"}}` with the HTTP
status equal to `code`, except that an error raised once the model has started answering
arrives inside an HTTP 200. Each class below is one course of action: retry after a pause,
stop paying, fix the configuration, or give up on this one request.
"""

from __future__ import annotations

from typing import Any

from memeval.errors import MemevalError, UsageError
from memeval.secrets import redact

KEY_VARS = ("OPENROUTER_API_KEY", "MEMEVAL_LLM_KEY")
IN_FLIGHT = "openrouter_in_flight_budget"
"""`metadata.limit_source` of OpenRouter's transient 402: recent calls are still settling."""


class LlmError(MemevalError):
    """A model call failed. Messages carry the service's words, never the request's headers."""

    retryable = False

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class Transient(LlmError):
    """408, 5xx, a timeout, a dropped connection or an error inside a 200: try again later."""

    retryable = True


class Unreachable(Transient):
    """Nothing answers at the service's address (refused, no route, bad scheme): no request
    went out, so a run set up against it must stop and name the URL."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class RateLimited(Transient):
    """429: everyone sharing the model's limiter must wait `retry_after` seconds."""


class InFlightBudget(Transient):
    """402 with `limit_source` = in-flight budget: the balance is fine, calls are settling."""


class MaybeBilled(Transient):
    """The request went out and no answer came back (a read timeout, a dropped connection):
    the service may have billed it, so its hold is counted as spent, never released."""


class CreditsExhausted(LlmError):
    """402 (or a 403 naming a budget): the key or account cannot pay; no paid call may start."""


class AuthError(UsageError):
    """401, or a 403 for a key that lacks permission: nothing will work until the key changes."""

    def __init__(self, message: str, *, env_var: str) -> None:
        super().__init__(
            message, fix=f"set a valid key in {env_var} (memeval reads {' or '.join(KEY_VARS)})"
        )
        self.env_var = env_var


class Rejected(LlmError):
    """400, a moderation or guardrail 403, an unknown model: this request will never pass."""


def classify(
    status: int, body: Any, retry_after: float | None, *, env_var: str
) -> LlmError | AuthError:
    """The error for an HTTP status and its JSON body (which may be anything, or nothing)."""
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    metadata = error.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    said = redact(str(error.get("message") or "").strip())[:300]  # services echo headers
    what = f"{status}" + (f": {said}" if said else "")
    if status == 401:
        return AuthError(
            f"the model service refused the key in {env_var} ({what})", env_var=env_var
        )
    if status == 402:
        if metadata.get("limit_source") == IN_FLIGHT or (
            metadata.get("reason") == "in_flight_budget_exhausted"
        ):
            return InFlightBudget(
                f"in-flight spending budget full ({what})", status=402, retry_after=retry_after
            )
        source = metadata.get("limit_source") or "credits"
        return CreditsExhausted(f"the key cannot pay ({source}; {what})", status=402)
    if status == 403:
        if "limit_source" in metadata:
            return CreditsExhausted(
                f"a spending limit is reached ({metadata['limit_source']}; {what})", status=403
            )
        if any(k in metadata for k in ("reasons", "flagged_input", "patterns")):
            return Rejected(f"the request was blocked by moderation ({what})", status=403)
        return AuthError(
            f"the key in {env_var} is not allowed to make this call ({what})", env_var=env_var
        )
    if status == 429:
        return RateLimited(f"rate limited ({what})", status=429, retry_after=retry_after)
    if status == 408 or status >= 500:
        return Transient(
            f"the model service failed ({what})", status=status, retry_after=retry_after
        )
    return Rejected(f"the model service rejected the request ({what})", status=status)
