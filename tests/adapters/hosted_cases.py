"""Inputs the hosted adapters' tests share: one assertion, a short history, and a small
LoCoMo-shaped conversation run as one case through an engine."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memeval.engines.base import Engine
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
