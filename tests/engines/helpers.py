"""Small builders shared by the engine tests; the data is invented for these tests alone."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from memeval.engines.reference import ReferenceEngine
from memeval.engines.types import QueryResult, Turn, TurnContext
from memeval.suites.fixture import Assertion

T = TypeVar("T")
DAY0 = datetime(2025, 6, 2, 8, 0, tzinfo=UTC)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def fact(id: str, text: str, **kw: Any) -> Assertion:
    """An assertion; `spo=(s, p, o)` fills the triple, `source` defaults to `ledger`."""
    spo = kw.pop("spo", None)
    if spo is not None:
        kw["subject"], kw["predicate"], kw["object"] = spo
    kw.setdefault("source", "ledger")
    return Assertion.model_validate({"id": id, "text": text, **kw})


def day(n: int) -> datetime:
    return DAY0 + timedelta(days=n)


def loaded(*assertions: Assertion, tenant: str = "t") -> ReferenceEngine:
    engine = ReferenceEngine()

    async def store() -> None:
        for a in assertions:
            await engine.store(tenant, a)

    run(store())
    return engine


def ask(engine: ReferenceEngine, text: str, tenant: str = "t", k: int = 5) -> QueryResult:
    return run(engine.query(tenant, text, k=k))


def ask_at(engine: ReferenceEngine, text: str, at: datetime, tenant: str = "t") -> QueryResult:
    return run(engine.query_at(tenant, text, at))


def first_text(result: QueryResult) -> str:
    return result.hits[0].text if result.hits else ""


def said(result: QueryResult, value: str) -> bool:
    """What the `contains` check reads: the answer or the first hit."""
    texts = [result.answer or "", first_text(result)]
    return not result.abstained and any(value.lower() in t.lower() for t in texts)


def abstained(result: QueryResult) -> bool:
    return result.abstained or not result.hits


def talk(
    engine: ReferenceEngine,
    exchanges: list[tuple[str, str]],
    *,
    thread: str,
    start: datetime,
    agent: str = "scribe",
    tenant: str = "t",
) -> list[Turn]:
    """Play exchanges through pre_turn/post_turn, a minute apart; returns the turns logged."""
    turns: list[Turn] = []

    async def play() -> None:
        at = start
        for user, reply in exchanges:
            asked = Turn(role="user", text=user, at=at)
            ctx = TurnContext(agent=agent, thread=thread, turn=asked, in_prompt=turns[-8:])
            await engine.pre_turn(tenant, ctx)
            answered = Turn(role="assistant", text=reply, at=at + timedelta(minutes=1))
            await engine.post_turn(tenant, agent, thread, answered)
            turns.extend([asked, answered])
            at += timedelta(minutes=2)

    run(play())
    return turns


def sections(markdown: str) -> list[str]:
    return [line[3:] for line in markdown.splitlines() if line.startswith("## ")]
