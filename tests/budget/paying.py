"""What the spend tests share: a fake service whose billing log is the truth, and sessions of
answers against it that pay from a budget in real Redis and record their calls in a real store."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

import pytest
import redis

from memeval.llm.answer import AnswerResult, PaidCalls
from memeval.llm.pricing import Price
from memeval.llm.spec import LlmSpec
from memeval.store import Store, open_store
from memeval_farm.redis_state import open_answerer
from tests.llm.redis_support import REDIS_URL
from tests.llm.server import KEY, FakeOpenRouter

MODEL = "openai/gpt-4.1-mini"  # the fake counts its prompts as OpenAI does, exactly
PRICES = {MODEL: (1, 4)}  # micro-USD per prompt / completion token
PRICE = Price(prompt=Decimal(1) / 1_000_000, completion=Decimal(4) / 1_000_000)
PACKS = [
    "# Memory\n\n## Documents\n- The billing service listens on port 8443.\n",
    "# Memory\n\n## Documents\n- Ada Lovelace moved to Turin in March 2021.\n"
    "- The staging cluster runs on three nodes in Frankfurt.\n",
    "# Memory\n\n## Documents\n- Invoices are archived after 400 days, then deleted.\n"
    "- The on-call rota changes every Monday at 09:00 UTC, and the handover note goes to "
    "the #ops channel with the open incidents listed first.\n",
]
QUESTIONS = [
    "Which port does the billing service listen on?",
    "Where did Ada Lovelace move?",
    "When does the on-call rota change, and where does the handover note go?",
]


@contextmanager
def fake_service(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *tags: str, **options: float
) -> Iterator[FakeOpenRouter]:
    """The fake, pricing `MODEL` and, for each tag, `MODEL-TAG`: a model of its own gives a
    test rate-limiter keys of its own (they are named by model)."""
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    monkeypatch.delenv("MEMEVAL_LLM_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with FakeOpenRouter(
        prices={**PRICES, **{f"{MODEL}-{t}": PRICES[MODEL] for t in tags}}, **options
    ) as fake:
        yield fake


def store_at(tmp_path: Path) -> Store:
    return open_store(f"sqlite:///{tmp_path / 'runs.db'}")


def spec_for(server: FakeOpenRouter, scope: str, **changes: object) -> LlmSpec:
    base = LlmSpec(
        model=MODEL, base_url=server.base_url, price=PRICE, budget_scopes=[scope], max_attempts=3
    )
    return base.model_copy(update=changes)


def forget_redis(tag: str) -> None:
    """What an embedded farm's Redis does when its `memeval run` ends: every key is gone."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"*{tag}*", count=500))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


async def answer_many(
    spec: LlmSpec, count: int, *, concurrency: int, ledger: PaidCalls | None = None
) -> list[AnswerResult]:
    """`count` answers, `concurrency` at a time, through one answerer (as one worker's cases)."""
    gate = asyncio.Semaphore(concurrency)
    async with open_answerer(spec, redis_url=REDIS_URL, ledger=ledger) as answerer:

        async def one(i: int) -> AnswerResult:
            async with gate:
                return await answerer.answer(QUESTIONS[i % 3], PACKS[i % 3])

        return await asyncio.gather(*(one(i) for i in range(count)))


def settled_log(server: FakeOpenRouter, *, quiet_s: float = 0.3) -> int:
    """The service's bill once it has finished every request it received (slow ones included)."""
    seen = -1
    while seen != len(server.calls):
        seen = len(server.calls)
        time.sleep(quiet_s)
    return server.billed_micros
