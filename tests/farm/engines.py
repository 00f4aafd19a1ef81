"""Engines that misbehave on purpose, for the farm tests; all answer like the reference engine.

Workers read their knobs from their own environment, as real engines read their keys:
`MEMEVAL_TEST_DELAY` (seconds slept per write), `MEMEVAL_TEST_MARKS` (a folder where each write
drops a `<pid>-<n>-<tenant>` file, so a test knows which process runs what, and how often).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path

from memeval.engines.reference import ReferenceEngine
from memeval.engines.types import MemoryItem
from memeval.errors import EngineUnavailable
from memeval.runner.context import tenant_part
from memeval.suites.fixture import Assertion

SECRET_ENV = "MEMEVAL_TEST_SECRET"
_writes = itertools.count()


class Slow(ReferenceEngine):
    """Marks and sleeps before each write."""

    name = "tests.farm.engines:Slow"

    async def _pause(self, tenant: str) -> None:
        marks = os.environ.get("MEMEVAL_TEST_MARKS")
        if marks:
            Path(marks, f"{os.getpid()}-{next(_writes)}-{tenant}").touch()
        await asyncio.sleep(float(os.environ.get("MEMEVAL_TEST_DELAY", "0")))

    async def store(self, tenant: str, assertion: Assertion) -> None:
        await self._pause(tenant)
        await super().store(tenant, assertion)

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        await self._pause(tenant)
        return await super().ingest(tenant, item)


class Crashing(ReferenceEngine):
    """A bug in the engine: every write raises something that is not `EngineUnavailable`."""

    name = "tests.farm.engines:Crashing"

    async def store(self, tenant: str, assertion: Assertion) -> None:
        raise RuntimeError("engine bug")


class Down(ReferenceEngine):
    """An engine that cannot be reached, ever: infrastructure, so the case is retried."""

    name = "tests.farm.engines:Down"

    async def store(self, tenant: str, assertion: Assertion) -> None:
        raise EngineUnavailable("connection refused")


class Secretive(ReferenceEngine):
    """Needs a key from the worker's environment, and quotes it in one error, as a careless
    HTTP client might; the farm must keep it out of messages, the store, logs and reports."""

    name = "tests.farm.engines:Secretive"

    def __init__(self) -> None:
        super().__init__()
        key = os.environ.get(SECRET_ENV)
        if not key:
            raise EngineUnavailable(f"{SECRET_ENV} is not set on this worker")
        self.key = key

    async def store(self, tenant: str, assertion: Assertion) -> None:
        if tenant_part("cfo_on_date") in tenant:
            raise RuntimeError(f"401 Unauthorized for Authorization: Bearer {self.key}")
        await super().store(tenant, assertion)


# How runs name these engines: a plug-in reference that every worker process can import.
SLOW = f"{__name__}:Slow"
CRASHING = f"{__name__}:Crashing"
DOWN = f"{__name__}:Down"
SECRETIVE = f"{__name__}:Secretive"


class SlowClose(Slow):
    """Marks its writes as `Slow` does, takes its time to close (as an engine removing its
    folder does), then marks that it closed in `MEMEVAL_TEST_MARKS` as `closed-<pid>`."""

    name = "tests.farm.engines:SlowClose"

    async def close(self) -> None:
        await asyncio.sleep(0.4)
        Path(os.environ["MEMEVAL_TEST_MARKS"], f"closed-{os.getpid()}").touch()
        await super().close()
