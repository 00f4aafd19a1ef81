"""Start-up for any command that pays a model: validate the options, price the models, check the
key's remaining limit, open the budget. Everything that can fail does so here, before the first
case starts, so a bad key or a typo never costs a half-finished run.
"""

from __future__ import annotations

import math
import os

import httpx
from pydantic import BaseModel

from memeval.errors import Unreachable, UsageError
from memeval.llm.client import (
    BASE_URL_VAR,
    DEFAULT_TIMEOUT_S,
    TIMEOUT_VAR,
    LlmClient,
    default_base_url,
)
from memeval.llm.pricing import Price, parse_price, resolve_prices
from memeval.llm.prompt import MAX_TOKENS
from memeval.llm.rates import parse_rates
from memeval.llm.shared import usd_to_micros
from memeval.llm.spec import LlmSpec


def parse_models(text: str) -> list[str]:
    models = [m.strip() for m in text.split(",") if m.strip()]
    if not models:
        raise UsageError("no model given", fix="name one or more: --models a/model,b/model")
    repeated = sorted({m for m in models if models.count(m) > 1})
    if repeated:
        raise UsageError(f"model {', '.join(repeated)} is listed twice", fix="list each once")
    return models


def budget_micros(budget_usd: float | None) -> int | None:
    """None means no budget; zero or less is a mistake, never 'unlimited'."""
    if budget_usd is None:
        return None
    if not math.isfinite(budget_usd) or usd_to_micros(budget_usd) <= 0:
        raise UsageError(
            f"--budget-usd must be positive, not {budget_usd:g}",
            fix="give the most this may spend in USD, e.g. --budget-usd 5",
        )
    return usd_to_micros(budget_usd)


def base_url_of(given: str | None) -> str:
    """The model API's base URL, checked: a bad one otherwise surfaces as a failed GET /key
    (exit 1, naming neither the option nor the variable) or, unpriced, as every call failing."""
    base = given or default_base_url()
    source = "--base-url" if given else BASE_URL_VAR
    try:
        url = httpx.URL(base)
    except httpx.InvalidURL:
        url = None
    usable = url is not None and url.scheme in ("http", "https") and bool(url.host)
    if not usable or any(c.isspace() for c in base):
        raise UsageError(
            f"{source} `{base}` is not an http(s) URL with a host",
            fix="give the OpenAI-compatible API's base URL, e.g. http://127.0.0.1:11434/v1",
        )
    return base


def service_down(base: str, exc: Unreachable) -> UsageError:
    """A model service that is not running: a setting to fix before the run, not a failure."""
    reason = exc.message.rsplit(": ", 1)[-1]
    return UsageError(
        f"nothing answers at {base}: no model service is running there ({reason})",
        fix="start it (`memeval models serve` serves the stand-in models), or give --base-url "
        f"(or {BASE_URL_VAR}) the URL of one that runs",
    )


def model_timeout(given: float | None) -> float:
    """Seconds a model call may take: `--model-timeout`, else `MEMEVAL_MODEL_TIMEOUT`, else 60.
    A call that times out after it was sent is counted at its hold (the service may bill it),
    so a timeout shorter than the model's answers wastes money as well as time."""
    source, value = "--model-timeout", given
    if value is None:
        text = os.environ.get(TIMEOUT_VAR, "").strip()
        if not text:
            return DEFAULT_TIMEOUT_S
        source = TIMEOUT_VAR
        try:
            value = float(text)
        except ValueError:
            value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise UsageError(
            f"{source} must be a positive number of seconds, not {value:g}",
            fix="e.g. --model-timeout 120 (the default is 60)",
        )
    return value


def user_prices(texts: list[str]) -> dict[str, Price]:
    return dict(parse_price(t) for t in texts)


def check_model_options(budget_usd: float | None, rates: list[str], prices: list[str]) -> None:
    """The model options a user can mistype, refused before anything is stored: a run's store
    is opened before its models are set up."""
    budget_micros(budget_usd)
    parse_rates(rates)
    user_prices(prices)


class LlmSetup(BaseModel):
    specs: dict[str, LlmSpec]
    warnings: list[str]


async def prepare(
    models: list[str],
    *,
    base_url: str | None = None,
    max_tokens: int = MAX_TOKENS,
    prices: list[str] | None = None,
    rates: list[str] | None = None,
    budget_usd: float | None = None,
    scope: str | None = None,
    timeout_s: float | None = None,
) -> LlmSetup:
    """One spec per model, ready to travel to workers. A budget needs `scope` (e.g. `run:ID`
    or `sweep:ID`) and a price for every model."""
    cap = budget_micros(budget_usd)
    if cap is not None and not scope:
        raise ValueError("a budget needs a scope")
    parsed_rates = parse_rates(rates or [])
    if max_tokens < 1:
        raise UsageError("--max-tokens must be at least 1", fix="e.g. --max-tokens 256")
    base = base_url_of(base_url)
    timeout = model_timeout(timeout_s)
    given = user_prices(prices or [])  # a typo in --price is reported before a missing key
    client = LlmClient(base)
    try:
        priced = await resolve_prices(models, client, given, need_prices=cap is not None)
        warnings = await _key_warnings(client, cap)
    except Unreachable as exc:
        raise service_down(base, exc) from None
    finally:
        await client.aclose()
    specs = {
        m: LlmSpec(
            model=m,
            base_url=base,
            max_tokens=max_tokens,
            price=priced[m],
            budget_scopes=[scope] if cap is not None and scope else [],
            rates=parsed_rates,
            timeout_s=timeout,
        )
        for m in models
    }
    return LlmSetup(specs=specs, warnings=warnings)


async def _key_warnings(client: LlmClient, cap: int | None) -> list[str]:
    """OpenRouter's GET /key: a budget above the key's remaining limit will not be reached."""
    info = await client.key_info()
    if info is None or info.limit_remaining is None:
        return []
    remaining = usd_to_micros(info.limit_remaining)
    if remaining <= 0:
        return [f"the key's limit is used up (${info.limit_remaining:.2f} left): calls will fail"]
    if cap is not None and remaining < cap:
        return [
            f"the key has ${info.limit_remaining:.2f} left of its limit, below the "
            f"${cap / 1e6:.2f} budget: the run will stop when the key runs dry"
        ]
    return []
