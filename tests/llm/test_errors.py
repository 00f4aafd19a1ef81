"""OpenRouter's documented error shapes, each mapped to what the caller must do."""

from __future__ import annotations

import pytest

from memeval.errors import (
    AuthError,
    InFlightBudget,
    ModelCreditsExhausted,
    RateLimited,
    Rejected,
    Transient,
)
from memeval.llm.failures import classify


def body(code, message="x", **metadata):
    return {"error": {"code": code, "message": message, "metadata": metadata}}


@pytest.mark.parametrize(
    ("status", "payload", "kind"),
    [
        (400, body(400, "context_length_exceeded"), Rejected),
        (401, body(401, "No auth credentials found"), AuthError),
        (402, body(402, limit_source="openrouter_in_flight_budget"), InFlightBudget),
        (402, body(402, reason="in_flight_budget_exhausted"), InFlightBudget),
        (
            402,
            body(402, reason="weight_exceeds_budget", limit_source="openrouter_credits"),
            ModelCreditsExhausted,
        ),
        (402, body(402, limit_source="openrouter_key_limit"), ModelCreditsExhausted),
        (402, None, ModelCreditsExhausted),
        (403, body(403, limit_source="openrouter_workspace_budget"), ModelCreditsExhausted),
        (403, body(403, reasons=["violence"], flagged_input="..."), Rejected),
        (403, body(403, "Request blocked", patterns=["ignore all"]), Rejected),
        (403, body(403, "insufficient permissions"), AuthError),
        (404, body(404, "model not found"), Rejected),
        (408, body(408), Transient),
        (429, body(429, error_type="rate_limit_exceeded"), RateLimited),
        (500, "not json at all", Transient),
        (502, body(502), Transient),
        (503, body(503), Transient),
    ],
)
def test_classify(status, payload, kind):
    error = classify(status, payload, 3.0, env_var="OPENROUTER_API_KEY")
    assert type(error) is kind
    assert str(status) in error.message


def test_retry_after_survives_where_it_matters():
    assert classify(429, body(429), 7.0, env_var="K").retry_after == 7.0
    assert (
        classify(
            402, body(402, limit_source="openrouter_in_flight_budget"), 2.0, env_var="K"
        ).retry_after
        == 2.0
    )
    assert classify(503, body(503), 1.5, env_var="K").retry_after == 1.5


def test_auth_errors_name_the_variable_and_exit_2():
    error = classify(401, body(401), None, env_var="MEMEVAL_LLM_KEY")
    assert isinstance(error, AuthError)
    assert "MEMEVAL_LLM_KEY" in error.render() and error.exit_code == 2
    denied = classify(403, body(403), None, env_var="OPENROUTER_API_KEY")
    assert "OPENROUTER_API_KEY" in denied.render()
