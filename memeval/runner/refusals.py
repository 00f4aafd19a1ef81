"""A refused call is an error of its case; the same refusal on a run's first cases stops it.

An engine that refuses every recall (a key without a capability, a required header missing)
would otherwise finish the run with exit 0 and a composite of 0.0%: a configuration problem
reported as a memory failure. So a case that meets `EngineRefused` is stored as an error,
its message naming the engine, route, status and vendor code, and never scored; and when the
first `refused_stop` cases of a run to land are all refused alike, the run stops with that
message and exit 2 instead of sending the rest to the same wall. One case that lands without
a refusal disarms the rule: the engine works, and a later refusal is that case's own error.
"""

from __future__ import annotations

from memeval.errors import EngineRefused, RefusedStop
from memeval.results import CaseResult, CaseStatus

REFUSED = "refused: "
DEFAULT_STOP = 3


def describe(exc: EngineRefused) -> str:
    """The case's error: the refusal's signature first, so equal refusals compare equal."""
    return f"{REFUSED}{exc.signature}: {exc}"


def signature(result: CaseResult) -> str | None:
    """The refusal a case ended on, or None for any other outcome."""
    error = result.error or ""
    if result.status is not CaseStatus.error or not error.startswith(REFUSED):
        return None
    return error.removeprefix(REFUSED).split(": ", 1)[0]


STOPPED = "the engine refused the run's first cases alike"
NOT_RUN = f"not run: {STOPPED}"


def stop_error(engine: str, count: int, example: str) -> RefusedStop:
    return RefusedStop(
        f"{STOPPED} ({engine}, {count} cases), so the run stopped: {example}",
        fix="check the engine's key, tier and settings (the message names the route and the "
        "vendor's code), then `memeval run --resume RUN`",
    )


def stopped(cases: list[CaseResult]) -> RefusedStop | None:
    """A farm run's stop, read from its results: the cases the flag kept from running, and
    the refusal that raised it."""
    if not any((c.error or "").startswith(NOT_RUN) for c in cases):
        return None
    met = [c for c in cases if signature(c) is not None]
    engine = met[0].engine if met else cases[0].engine
    return stop_error(engine, len(met), (met[0].error or "") if met else "")


class FirstCases:
    """Watches the first `limit` cases to land (0: never stops)."""

    def __init__(self, limit: int = DEFAULT_STOP) -> None:
        self.limit = limit
        self._seen: list[str | None] = []

    def land(self, result: CaseResult) -> RefusedStop | None:
        """The error that stops the run, once the first `limit` cases are refused alike."""
        if len(self._seen) >= self.limit:
            return None
        self._seen.append(signature(result))
        if len(self._seen) < self.limit or None in self._seen or len(set(self._seen)) != 1:
            return None
        return stop_error(result.engine, self.limit, result.error or "")
