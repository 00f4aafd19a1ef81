"""What the store takes and hands back, besides the `memeval.results` models it persists whole."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from memeval.results import CaseStatus


class RunStatus(StrEnum):
    running = "running"
    finished = "finished"
    interrupted = "interrupted"  # stopped early (Ctrl-C, budget, lost broker); resumable


class CaseKey(NamedTuple):
    """The identity of one unit of work; a tuple so it can key sets and dicts directly."""

    case_id: str
    trial: int


class PlannedCase(BaseModel):
    """One case × trial a run means to execute.

    Kind and dimension are kept with the plan so a case the watchdog declares lost can still be
    written as a well-formed `CaseResult` and counted under the right dimension.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    case_id: str
    trial: int = 0
    kind: str
    dimension: str | None = None

    @property
    def key(self) -> CaseKey:
        return CaseKey(self.case_id, self.trial)


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    label: str
    engine: str
    suite: str
    status: RunStatus
    options: dict[str, Any] = Field(description="As given, minus anything that looked secret.")
    prompt_version: str | None = None
    created_at: datetime
    finished_at: datetime | None = None
    planned_count: int
    planned: list[PlannedCase]
    counts: dict[CaseStatus, int] = Field(
        default_factory=dict, description="Stored case results per status."
    )

    @property
    def subset(self) -> str | None:
        """What part of its suite the run planned ("temporal only"), None for the whole."""
        named = self.options.get(SUBSET)
        return named if isinstance(named, str) and named else None

    @property
    def suite_at(self) -> str:
        """The suite as found from any working folder (`locomo:/abs/path.json`), while `suite`
        stays as the user typed it (`locomo:data/x.json`) for lists and reports."""
        found = self.options.get(SUITE_AT)
        return found if isinstance(found, str) and found else self.suite


SUBSET = "subset"
"""The key, among a run's options, of the subset it planned (`--dimension`, `--only`)."""
SUITE_AT = "suite_at"
"""The key, among a run's options, of its suite with every path made absolute, when that
differs from the suite as typed: what `--resume` and `memeval answer` read the cases from."""


class PaidState(StrEnum):
    sent = "sent"  # on its way: counted at its hold until the bill is known
    billed = "billed"  # answered, counted at its bill
    unbilled = "unbilled"  # refused by the service before any work: counted at zero
    unknown = "unknown"  # sent, never answered (a timeout, a dropped line): counted at its hold


class PaidCall(BaseModel):
    """One attempt at a paid model call, as the budget counted it."""

    model_config = ConfigDict(extra="forbid")

    call_id: str = Field(min_length=1, max_length=64)
    run_id: str
    model: str
    state: PaidState
    held_micros: int = Field(ge=0)
    charged_micros: int = Field(ge=0)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def overbilled_micros(self) -> int:
        return max(0, self.charged_micros - self.held_micros)


class Overbilling(NamedTuple):
    calls: int
    micros: int


class RunMatch(NamedTuple):
    """The run a reference names, and the older runs sharing its label that it hides."""

    record: RunRecord
    shadowed: list[str]

    def note(self, ref: str) -> str | None:
        """What a command prints when `ref` named several runs and it picked the newest."""
        if not self.shadowed:
            return None
        return (
            f"`{ref}` names {len(self.shadowed) + 1} runs; using the newest, {self.record.id} "
            f"(older: {', '.join(self.shadowed)})"
        )
