"""Prices: the user's, or the service's model list cached on disk."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal

import pytest

from memeval.errors import UsageError
from memeval.llm.client import LlmClient
from memeval.llm.pricing import Price, cache_dir, model_list, parse_price, resolve_prices
from tests.llm.server import FakeOpenRouter


def resolve(server, models, user=None, need=False):
    async def go():
        client = LlmClient(server.base_url)
        try:
            return await resolve_prices(models, client, user or {}, need_prices=need)
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_user_price_is_per_million_tokens():
    model, price = parse_price("my/model=0.15/0.6")
    assert model == "my/model"
    assert price.prompt == Decimal("0.15") / 1_000_000
    assert price.micros(1_000_000, 1_000_000) == 750_000
    for bad in ("my/model", "my/model=0.15", "my/model=a/b", "=1/2"):
        with pytest.raises(UsageError, match="price"):
            parse_price(bad)


def test_costs_round_up_never_down():
    price = Price(prompt=Decimal("0.0000001"), completion=Decimal(0))
    assert price.micros(1, 0) == 1  # 0.1 micro-USD is held as 1


def test_listed_prices_are_fetched_once_then_cached(server):
    prices = resolve(server, ["test/cheap", "test/dear"])
    assert prices["test/cheap"].micros(1, 1) == 3 and prices["test/dear"].micros(1, 1) == 9
    files = list(cache_dir().glob("models-*.json"))
    assert len(files) == 1
    assert {m["id"] for m in json.loads(files[0].read_text())["models"]} >= {"test/cheap"}
    server.prices["test/cheap"] = (100, 100)  # the cache is fresh: the old price stands
    assert resolve(server, ["test/cheap"])["test/cheap"].micros(1, 1) == 3


def test_a_failed_fetch_falls_back_to_a_stale_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path))

    async def listing(base_url: str, max_age_s: float):
        client = LlmClient(base_url)
        try:
            return await model_list(client, max_age_s=max_age_s)
        finally:
            await client.aclose()

    with FakeOpenRouter() as fake:
        url = fake.base_url
        assert asyncio.run(listing(url, 3600))
    listed = asyncio.run(listing(url, 0))  # stale, and the service is gone
    assert listed and any(m.id == "test/cheap" for m in listed)


def test_user_prices_win_and_unknown_models_are_errors(server):
    _, mine = parse_price("test/cheap=5/5")
    assert resolve(server, ["test/cheap"], {"test/cheap": mine})["test/cheap"] == mine
    with pytest.raises(UsageError, match="not in the service's model list"):
        resolve(server, ["test/nope"])
    with pytest.raises(UsageError, match="no fixed price"):
        resolve(server, ["openrouter/auto"])


def test_a_budget_needs_a_price_for_every_model(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path))

    async def go(need):
        client = LlmClient("http://127.0.0.1:1/v1")  # a local server that is not there
        try:
            return await resolve_prices(["llama3"], client, {}, need_prices=need)
        finally:
            await client.aclose()

    assert asyncio.run(go(False)) == {"llama3": None}
    with pytest.raises(UsageError, match="no price known for llama3"):
        asyncio.run(go(True))
