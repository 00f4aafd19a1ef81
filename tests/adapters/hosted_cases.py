"""Inputs the hosted adapters' tests share: one assertion, a short history (and a history
written twice under one key, as a redelivered task writes it), and a small LoCoMo-shaped
conversation run as one case through an engine."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memeval.engines.base import Engine
from memeval.engines.idempotency import write_key
from memeval.engines.types import Turn
from memeval.importers import locomo
from memeval.results import CaseResult
from memeval.runner import run_case
from memeval.suites.fixture import Assertion
from tests.benchmarks.samples import LOCOMO, write

FIRST = Assertion(id="plan-1", text="Acme is on the Free plan.", source="crm")
START = datetime(2024, 3, 3, 9, 0, tzinfo=UTC)


def turn(text: str, minute: int = 0, speaker: str | None = None) -> Turn:
    return Turn(role="user", text=text, at=START + timedelta(minutes=minute), speaker=speaker)


def history(n: int) -> list[Turn]:
    return [turn(f"Line {i} of the history about boats.", i, "Ines") for i in range(n)]


def written_twice(engine: Engine, turns: list[Turn]) -> tuple[list[str], list[str], list[str]]:
    """The ids a history's write returned, those its redelivery returned, and what the tenant
    then lists (once the service has had a moment to index)."""

    async def calls() -> tuple[list[str], list[str], list[str]]:
        with write_key("run/case:4"):
            ids = await engine.write_history("t", "a", "x", turns)
        with write_key("run/case:4"):  # the task redelivered: the same writes again
            again = await engine.write_history("t", "a", "x", turns)
        await asyncio.sleep(0.15)
        listed = await engine.list("t")
        await engine.close()
        return ids, again, listed

    return asyncio.run(calls())


def locomo_through(engine: Engine, folder: Path) -> tuple[CaseResult, list[str]]:
    """The sample conversation as its importer makes it, run as one case; with the ids of
    every turn it holds, which the engine should each have stored once."""
    scenario = locomo.scenario(locomo.read(write(folder, "locomo-sample.json", LOCOMO))[0])
    turn_ids = [
        line.id
        for thread in scenario.threads
        for line in thread.lines(scenario.thread_start(thread))
    ]

    async def go() -> CaseResult:
        try:
            return await run_case(scenario, engine, run_id="hosted-locomo")
        finally:
            await engine.close()

    return asyncio.run(go()), turn_ids
