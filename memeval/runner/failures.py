"""What an exception raised while a case runs means for its run: the one failure policy.

Every place a case runs asks `judge` (an in-process run, `memeval.inprocess.run_plan`; a farm
worker, `memeval_farm.tasks`; the pytest plugin, `memeval.pytest_session`), so the same
exception means the same thing everywhere, and only what differs between the places is a
setting of the `Place`, not a branch of its own:

- the engine's account is spent (`CreditsExhausted`): no later case can succeed. In this
  process the run stops; on a farm the case is stored `skipped_credits` and the run's flag
  tells every other worker to skip the rest (`memeval_farm.halt`).
- the engine is unreachable (`EngineUnavailable`), or the farm's own Redis failed: that is
  infrastructure, not memory. In this process the run stops (resumable); on a farm the case is
  retried, on a fresh tenant, until its retries are spent, and then stored as an error.
- the case outran the farm's case timeout: an error result naming the timeout.
- anything else (an engine that crashes, a bug): the case's error result, with its reason
  masked, so the run goes on and a resume runs the case again.

A refusal (`EngineRefused`) never reaches here: the runner stores it as the case's error, and
the run stops only when its first cases are refused alike (`memeval.runner.refusals`).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from memeval.errors import CreditsExhausted, EngineUnavailable
from memeval.results import CaseStatus
from memeval.secrets import redact


class Action(StrEnum):
    """What the caller does with the exception."""

    stop = "stop"  # this process stops the run: re-raise it, the run closes as interrupted
    halt = "halt"  # store the result, and tell every worker the run is over (the farm's flag)
    retry = "retry"  # infrastructure: run the case again
    record = "record"  # store the result: the run goes on


class Place(BaseModel):
    """Where the case ran. In this process there is nobody to retry a case or to tell, so
    what a farm would retry or flag stops the run instead."""

    model_config = ConfigDict(frozen=True)

    farm: bool = False
    tries: int = Field(default=0, ge=0)
    """Retries of this case already made (the farm's `task.request.retries`)."""
    retries: int = Field(default=0, ge=0)
    """How many a case may have in all (`MEMEVAL_RETRIES`)."""
    infrastructure: tuple[type[Exception], ...] = ()
    """The farm's own faults, retried like an unreachable engine (Redis down or too slow)."""
    timeouts: tuple[type[BaseException], ...] = ()
    """What the place raises when a case outruns `case_timeout`, besides `TimeoutError`."""
    case_timeout: float | None = None


IN_PROCESS = Place()


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: Action
    status: CaseStatus = CaseStatus.error
    """The stored result's status (`record`, `halt`)."""
    reason: str = ""
    """The stored result's error, masked (`record`, `halt`)."""
    crashed: bool = False
    """Nothing the policy expected: worth the traceback in the log."""


def judge(exc: Exception, place: Place = IN_PROCESS) -> Verdict:
    """What `exc`, raised while a case ran at `place`, does to the case and its run."""
    if isinstance(exc, CreditsExhausted):
        if not place.farm:
            return Verdict(action=Action.stop)
        return Verdict(
            action=Action.halt, status=CaseStatus.skipped_credits, reason=redact(str(exc))
        )
    farm_fault = isinstance(exc, place.infrastructure)
    if farm_fault or isinstance(exc, EngineUnavailable):
        if not place.farm:
            return Verdict(action=Action.stop)
        if place.tries < place.retries:
            return Verdict(action=Action.retry)
        what = "the farm's Redis failed" if farm_fault else "engine unavailable"
        reason = f"{what} after {place.tries + 1} attempts: {exc}"
        return Verdict(action=Action.record, reason=redact(reason))
    if place.case_timeout is not None and isinstance(exc, (TimeoutError, *place.timeouts)):
        reason = f"the case did not finish within {place.case_timeout:g}s"
        return Verdict(action=Action.record, reason=reason)
    reason = redact(f"{type(exc).__name__}: {exc}")
    return Verdict(action=Action.record, reason=reason, crashed=True)
