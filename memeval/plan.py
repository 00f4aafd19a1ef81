"""Turns `memeval run` options into the list of cases to execute, each with a stable key."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from memeval.errors import UsageError
from memeval.runner.context import RunOptions
from memeval.suites.catalog import Suite
from memeval.suites.fixture import Dimension, Fixture
from memeval.suites.scenario import Scenario


class CaseRef(BaseModel):
    case_id: str
    trial: int

    @property
    def key(self) -> str:
        return f"{self.case_id}#{self.trial}"


class RunPlan(BaseModel):
    run_id: str
    label: str
    engine: str
    suite: str
    options: RunOptions
    cases: list[CaseRef]
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


def new_run_id() -> str:
    """Sortable by start time, unique without coordination."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def select(suite: Suite, only: list[str], dimensions: list[str]) -> list[Scenario | Fixture]:
    """Filter by `--only` (a case id, or its last part) and `--dimension`."""
    for name in dimensions:
        if name not in Dimension.__members__:
            raise UsageError(
                f"unknown dimension `{name}`",
                fix=f"use one of: {', '.join(d.value for d in Dimension)}",
            )
    cases = [c.case for c in suite.cases]
    if dimensions:
        cases = [c for c in cases if isinstance(c, Fixture) and c.dimension.value in dimensions]
    if only:
        wanted = set(only)
        picked = [c for c in cases if c.id in wanted or c.id.rsplit("/", 1)[-1] in wanted]
        known = {c.id for c in picked} | {c.id.rsplit("/", 1)[-1] for c in picked}
        unknown = sorted(wanted - known)
        if unknown:
            raise UsageError(
                f"no case matches --only {', '.join(unknown)}",
                fix="list the case ids with `memeval suites list --cases`",
            )
        cases = picked
    if not cases:
        raise UsageError("the selection holds no case", fix="widen --only / --dimension")
    return cases
