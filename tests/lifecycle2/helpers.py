"""Running one built-in case through an engine, in this process."""

from __future__ import annotations

import asyncio

from memeval.engines.base import Engine
from memeval.engines.registry import create
from memeval.results import CaseResult
from memeval.runner import RunOptions, run_case
from memeval.suites.catalog import resolve
from memeval.suites.scenario import Scenario


def scenario(suite: str, name: str) -> Scenario:
    return next(s for s in resolve(suite).scenarios if s.name == name)


def run(case: Scenario, engine: Engine | str, options: RunOptions | None = None) -> CaseResult:
    async def go() -> CaseResult:
        used = create(engine) if isinstance(engine, str) else engine
        try:
            return await run_case(case, used, run_id="life2", options=options)
        finally:
            await used.close()

    return asyncio.run(go())
