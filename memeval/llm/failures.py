"""What a model service's error response means, as the `memeval.errors` class to raise.

OpenRouter documents its errors as `{"error": {"code", "message", "metadata"}}` with the HTTP
status equal to `code`, except that an error raised once the model has started answering
arrives inside an HTTP 200. Each class `classify` returns is one course of action: retry
after a pause, stop paying, fix the configuration, or give up on this one request.
"""

from __future__ import annotations

from typing import Any

from memeval.errors import (
    AuthError,
    InFlightBudget,
    LlmError,
    ModelCreditsExhausted,
    RateLimited,
    Rejected,
    Transient,
)
from memeval.secrets import redact

KEY_VARS = ("OPENROUTER_API_KEY", "MEMEVAL_LLM_KEY")
IN_FLIGHT = "openrouter_in_flight_budget"
"""`metadata.limit_source` of OpenRouter's transient 402: recent calls are still settling."""


def auth_error(message: str, env_var: str) -> AuthError:
    """A refused model key, its fix naming the variable memeval read it from."""
    fix = f"set a valid key in {env_var} (memeval reads {' or '.join(KEY_VARS)})"
    return AuthError(message, env_var=env_var, fix=fix)


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
        return auth_error(f"the model service refused the key in {env_var} ({what})", env_var)
    if status == 402:
        if metadata.get("limit_source") == IN_FLIGHT or (
            metadata.get("reason") == "in_flight_budget_exhausted"
        ):
            return InFlightBudget(
                f"in-flight spending budget full ({what})", status=402, retry_after=retry_after
            )
        source = metadata.get("limit_source") or "credits"
        return ModelCreditsExhausted(f"the key cannot pay ({source}; {what})", status=402)
    if status == 403:
        if "limit_source" in metadata:
            return ModelCreditsExhausted(
                f"a spending limit is reached ({metadata['limit_source']}; {what})", status=403
            )
        if any(k in metadata for k in ("reasons", "flagged_input", "patterns")):
            return Rejected(f"the request was blocked by moderation ({what})", status=403)
        return auth_error(
            f"the key in {env_var} is not allowed to make this call ({what})", env_var
        )
    if status == 429:
        return RateLimited(f"rate limited ({what})", status=429, retry_after=retry_after)
    if status == 408 or status >= 500:
        return Transient(
            f"the model service failed ({what})", status=status, retry_after=retry_after
        )
    return Rejected(f"the model service rejected the request ({what})", status=status)
