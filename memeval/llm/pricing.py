"""Model prices: the user's own, or OpenRouter's model list cached on disk for a day.

Prices are kept as exact decimals in USD per token (OpenRouter's own unit) and turned into
integer micro-USD only when a cost is computed, rounding up, so estimates never undershoot.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import time
from decimal import Decimal, InvalidOperation
from pathlib import Path

from pydantic import BaseModel, Field

from memeval.errors import LlmError, UsageError
from memeval.llm.client import LlmClient, ModelPrice

CACHE_MAX_AGE_S = 24 * 3600
MILLION = Decimal(1_000_000)
_USER_PRICE = re.compile(r"^(?P<model>[^=\s]+)=(?P<prompt>[0-9.]+)/(?P<completion>[0-9.]+)$")


class Price(BaseModel):
    prompt: Decimal = Field(ge=0, description="USD per prompt token.")
    completion: Decimal = Field(ge=0, description="USD per completion token.")
    source: str = "openrouter"

    def micros(self, prompt_tokens: int, completion_tokens: int) -> int:
        usd = self.prompt * prompt_tokens + self.completion * completion_tokens
        return math.ceil(usd * MILLION)

    def per_million(self) -> str:
        return (
            f"${float(self.prompt * MILLION):g}/${float(self.completion * MILLION):g} per M tokens"
        )


def parse_price(text: str) -> tuple[str, Price]:
    """`MODEL=PROMPT/COMPLETION` in USD per million tokens, as providers advertise them."""
    match = _USER_PRICE.match(text.strip())
    if match is None:
        raise UsageError(
            f"cannot read price `{text}`",
            fix="write MODEL=PROMPT/COMPLETION in USD per million tokens, e.g. my/model=0.15/0.6",
        )
    try:
        prompt, completion = Decimal(match["prompt"]), Decimal(match["completion"])
    except InvalidOperation:
        raise UsageError(f"price `{text}` is not a number", fix="e.g. my/model=0.15/0.6") from None
    price = Price(prompt=prompt / MILLION, completion=completion / MILLION, source="user")
    return match["model"], price


def cache_dir() -> Path:
    if configured := os.environ.get("MEMEVAL_CACHE_DIR"):
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "memeval"


class _Cached(BaseModel):
    fetched_at: float
    models: list[ModelPrice]


def _cache_file(base_url: str, folder: Path) -> Path:
    digest = hashlib.sha256(base_url.encode()).hexdigest()[:16]
    return folder / f"models-{digest}.json"


async def model_list(
    client: LlmClient, *, folder: Path | None = None, max_age_s: float = CACHE_MAX_AGE_S
) -> list[ModelPrice] | None:
    """The service's model list, from the cache while fresh. A failed fetch falls back to a
    stale cache: yesterday's prices beat no prices. None when neither exists."""
    path = _cache_file(client.base_url, folder or cache_dir())
    cached: _Cached | None = None
    if path.exists():
        try:
            cached = _Cached.model_validate_json(path.read_text())
        except ValueError:
            cached = None
    if cached is not None and time.time() - cached.fetched_at < max_age_s:
        return cached.models
    try:
        models = await client.models()
    except LlmError:
        return cached.models if cached is not None else None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(_Cached(fetched_at=time.time(), models=models).model_dump_json())
    tmp.replace(path)
    return models


def price_of(model: str, listed: list[ModelPrice] | None) -> Price | None:
    """The listed price; None when the list does not price the model (a local server)."""
    entry = next((m for m in listed or [] if m.id == model), None)
    if entry is None:
        if any(m.prompt is not None for m in listed or []):  # a priced list that lacks it
            raise UsageError(
                f"model `{model}` is not in the service's model list",
                fix="check the model id, or give its price with --price MODEL=PROMPT/COMPLETION",
            )
        return None
    if entry.prompt is None or entry.completion is None:
        return None
    try:
        prompt, completion = Decimal(entry.prompt), Decimal(entry.completion)
    except InvalidOperation:
        return None
    if prompt < 0 or completion < 0:
        raise UsageError(
            f"model `{model}` has no fixed price (a router picks the model per request)",
            fix="give a price to budget against with --price MODEL=PROMPT/COMPLETION",
        )
    return Price(prompt=prompt, completion=completion)


async def resolve_prices(
    models: list[str],
    client: LlmClient,
    user: dict[str, Price],
    *,
    need_prices: bool,
    folder: Path | None = None,
) -> dict[str, Price | None]:
    """Each model's price; with a budget (`need_prices`) every model must have one, since a
    budget cannot hold what it cannot price."""
    missing = [m for m in models if m not in user]
    listed = await model_list(client, folder=folder) if missing else None
    prices: dict[str, Price | None] = {
        m: user[m] if m in user else price_of(m, listed) for m in models
    }
    unpriced = [m for m, p in prices.items() if p is None]
    if need_prices and unpriced:
        raise UsageError(
            f"no price known for {', '.join(unpriced)}, so a budget cannot hold its calls",
            fix="give prices with --price MODEL=PROMPT/COMPLETION (USD per million tokens)",
        )
    return prices
