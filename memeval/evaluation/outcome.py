"""What a run ended as, beyond its report: what stopped it early, and what is left to do.

The command line turns these into messages and exit codes; `memeval.evaluate` into exceptions
(a stop) or nothing (the report's case statuses say the rest).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from memeval.errors import CreditsExhausted, MemevalError
from memeval.llm.estimate import skipped_calls
from memeval.results import CaseStatus, RunReport
from memeval.store import RunRecord
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario
from memeval.summary import plural

NOT_RUN = "not run: the engine's credits ran out earlier in this run"
"""The reason stored for a case a worker skipped because its run's credits ran out
(`memeval_farm.halt`)."""


class Stop(StrEnum):
    """Why a run stopped before its cases were all sent or landed."""

    interrupted = "interrupted"  # Ctrl-C or SIGTERM
    broker = "broker"  # the broker stayed away
    engine = "engine"  # the engine became unreachable
    credits = "credits"  # the engine's account ran dry (seen in this process)
    refused = "refused"  # the engine refused the first cases alike (seen in this process)


class RunStopped(Exception):
    """An executor's own reason to stop the whole run (the farm's broker stayed away), with
    the message and fix to show; `execute` closes the run as interrupted and adds the resume."""

    def __init__(self, stop: Stop, error: MemevalError) -> None:
        super().__init__(error.message)
        self.stop, self.error = stop, error


class RunEnd(BaseModel):
    """A run closed in the store: finished, or interrupted by `stop` (and `error`, its
    message), either way with its reports written."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    report: RunReport
    stop: Stop | None = None
    error: MemevalError | None = None
    unwritten: bool = False  # stopped while the reports were written: some may be missing


def credits_out(reason: str, run_id: str, skipped: int | None = None) -> CreditsExhausted:
    """The run stopped because the engine cannot be paid: one message, its own exit code."""
    count = "" if skipped is None else f"; {plural(skipped, 'case')} skipped"
    return CreditsExhausted(
        f"credits exhausted: {reason}{count}",
        fix=f"top up the engine's account, then `memeval run --resume {run_id}`",
    )


def credits_stop(report: RunReport) -> CreditsExhausted | None:
    """Cases the farm's workers skipped once the engine's credits ran out."""
    stopped = [c for c in report.cases if c.status is CaseStatus.skipped_credits]
    if not stopped:
        return None
    # Quote a case that met the 402, not one skipped because of it.
    met = [c.error for c in stopped if c.error and not c.error.startswith(NOT_RUN)]
    return credits_out((met or [stopped[0].error or "402"])[0], report.run_id, len(stopped))


def unfinished(report: RunReport) -> int:
    """Planned cases without a done result: errored, lost, skipped or never landed."""
    return sum(c.status is not CaseStatus.done for c in report.cases) + len(report.missing)


def only_budget_stopped(report: RunReport) -> bool:
    return not report.missing and all(
        c.status in (CaseStatus.done, CaseStatus.skipped_budget) for c in report.cases
    )


def budget_reached(
    report: RunReport, planned: Iterable[Scenario | Fixture], record: RunRecord
) -> str:
    """A run that spent its budget did what it was asked: not an error, and a plain resume
    would find no money either, so only a larger budget is offered."""
    calls = skipped_calls(planned, report.cases)
    cases = sum(c.status is CaseStatus.skipped_budget for c in report.cases)
    cap = record.options.get("budget_micros")
    within = f" within the ${cap / 1e6:.4f} budget" if cap else ""
    return (
        f"[yellow]budget reached: {plural(calls, 'call')} skipped[/] "
        f"({plural(cases, 'case')}){within}; to answer them: "
        f"`memeval run --resume {record.id} --budget-usd LARGER`"
    )
