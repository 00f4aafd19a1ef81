"""Start-up: specs for the workers, and the key's remaining limit checked against the budget."""

from __future__ import annotations

import asyncio

import pytest

from memeval.errors import UsageError
from memeval.llm.setup import parse_models, prepare
from memeval.runner import RunOptions


def test_specs_carry_prices_scope_and_rates(server):
    setup = asyncio.run(
        prepare(
            ["test/cheap", "test/dear"],
            base_url=server.base_url,
            max_tokens=64,
            rates=["model=60/m"],
            budget_usd=2.5,
            scope="run:r1",
        )
    )
    cheap = setup.specs["test/cheap"]
    assert cheap.price is not None and cheap.price.micros(1, 1) == 3
    assert cheap.budget_scopes == ["run:r1"] and cheap.max_tokens == 64
    assert [str(r.kind) for r in cheap.rates] == ["model"]
    assert setup.warnings == []  # the key has no limit
    options = RunOptions(llm=cheap, rates=cheap.rates)  # travels in task messages as JSON
    assert RunOptions.model_validate_json(options.model_dump_json()) == options


def test_a_key_limit_below_the_budget_is_warned_about(server):
    server.limit_remaining = 1.25
    setup = asyncio.run(prepare(["test/cheap"], base_url=server.base_url, budget_usd=5, scope="s"))
    assert len(setup.warnings) == 1 and "$1.25 left" in setup.warnings[0]
    assert not asyncio.run(
        prepare(["test/cheap"], base_url=server.base_url, budget_usd=1, scope="s")
    ).warnings
    server.limit_remaining = 0.0
    used_up = asyncio.run(prepare(["test/cheap"], base_url=server.base_url))
    assert "used up" in used_up.warnings[0]


def test_start_up_errors():
    with pytest.raises(UsageError, match="listed twice"):
        parse_models("a,b,a")
    with pytest.raises(UsageError, match="no model"):
        parse_models(" , ")
    with pytest.raises(UsageError, match="must be positive"):
        asyncio.run(prepare(["m"], budget_usd=0, scope="s"))
