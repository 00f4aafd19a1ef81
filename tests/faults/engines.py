"""Engines whose infrastructure fails on purpose, for the farm tests; otherwise the reference
engine. Workers import them by reference and read their knobs from their own environment."""

from __future__ import annotations

import os
import re
from collections import Counter

from memeval.engines.reference import ReferenceEngine
from memeval.engines.types import MemoryItem, Pack, Turn, TurnContext
from memeval.errors import EngineUnavailable
from memeval.runner.context import tenant_part
from memeval.suites.fixture import Assertion

DOWN_ENV = "MEMEVAL_TEST_DOWN"
BREAK_AT = 3
FIRST_ATTEMPT = re.compile(r"-a0(\.|$)")  # a case's tenant, or a scenario's under it


class BrokenFirstAttempt(ReferenceEngine):
    """The connection drops on the third write of every tenant of a case's first attempt, so
    that attempt leaves half its writes behind; tenants whose name holds `$MEMEVAL_TEST_DOWN`
    (part of a case id, escaped as tenant ids escape it) are unreachable on every attempt."""

    name = f"{__name__}:BrokenFirstAttempt"

    def __init__(self) -> None:
        super().__init__()
        self._writes: Counter[str] = Counter()

    def _wire(self, tenant: str) -> None:
        down = os.environ.get(DOWN_ENV)
        if down and tenant_part(down) in tenant:
            raise EngineUnavailable("connection refused")
        self._writes[tenant] += 1
        if FIRST_ATTEMPT.search(tenant) and self._writes[tenant] == BREAK_AT:
            raise EngineUnavailable("connection reset by peer")

    async def store(self, tenant: str, assertion: Assertion) -> None:
        self._wire(tenant)
        await super().store(tenant, assertion)

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        self._wire(tenant)
        return await super().ingest(tenant, item)

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        self._wire(tenant)
        return await super().pre_turn(tenant, ctx)

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        self._wire(tenant)
        return await super().post_turn(tenant, agent, thread, turn)


BROKEN = BrokenFirstAttempt.name
