"""Every error memeval raises on purpose, typed by what must happen next.

A failure is one of three things, and the type says which, so no caller has to read a message
to decide: a *memory failure* (scored: the engine answered, wrongly), *infrastructure* (not
scored: the case is retried or the run stops and resumes later), or a *setting to fix* (not
scored, not retried: one message naming the fix, never a traceback). The tree::

    Exception
    ├── MemevalError ........... printed as one message plus its fix; exit 1 unless below
    │   ├── UsageError ......... exit 2: an option, a setting or the environment must change
    │   │   ├── AuthError ...... the model service refused its key (a 401 or a bare 403)
    │   │   ├── UnknownRun ..... a run id, label or `latest` naming no stored run
    │   │   └── RefusedStop .... the run's first cases met the same `EngineRefused`: stopped
    │   ├── SuiteError ......... exit 2: a suite file, located to its line and field
    │   ├── AuthRejected ....... exit 2: an engine refused its key (also an `EngineRefused`)
    │   ├── OutOfCredit ........ an account cannot pay for another call (base of the two below)
    │   │   ├── CreditsExhausted ....... exit 6: the *engine's* account; the run stops, its
    │   │   │                            unrun cases `skipped_credits`, resumable once topped up
    │   │   └── ModelCreditsExhausted .. the *model's* key (also an `LlmError`): no paid call
    │   │                                starts, answers are `skipped_budget`, the run goes on
    │   ├── LlmError ........... a model call failed; `retryable` says whether to try again
    │   │   ├── Transient ...... retried after a pause: 408, 5xx, a timeout, an error in a 200
    │   │   │   ├── Unreachable ..... nothing answers at the URL (no request went out)
    │   │   │   ├── RateLimited ..... 429: everyone sharing the model's limiter waits
    │   │   │   ├── InFlightBudget .. 402 of calls still settling: the balance is fine
    │   │   │   └── MaybeBilled ..... sent, no answer back: the hold counts as spent
    │   │   ├── ModelCreditsExhausted (above)
    │   │   └── Rejected ....... this one request never passes (400, moderation, unknown model)
    │   ├── GateFailed ......... exit 3 (composite below `--fail-under`) or 4 (regression)
    │   ├── BrokerGone ......... the farm's broker stayed away: the run stops, resumable
    │   └── WorkerRefused ...... a worker's preflight verdict, with the exit code it chose
    ├── Unsupported ............ the engine lacks a capability: recorded *unsupported*
    ├── EngineUnavailable ...... infrastructure: the case is rerun on a fresh tenant
    │   └── FarmUnavailable .... (memeval_farm.shield) the farm's own Redis failed mid-call
    └── EngineRefused .......... answered, but not scorably: the case errors, never retried
        ├── AuthRejected (above)
        └── RemoteError ........ (engines.adapters.transport) a refusal carrying its body

Anything else an engine raises during a case is a memory failure and is scored. Exit codes the
CLI adds on its own: 0 every case done, 1 a case errored, 5 the model budget was reached, 130
interrupted (`memeval run --help` lists them all).

The engine errors (`Unsupported`, `EngineUnavailable`, `EngineRefused`) are not
`MemevalError`s: they travel through the runner, which turns them into case statuses, and reach
the user only as such. `CreditsExhausted` is both: an engine raises it mid-case, and the run's
stop is the same error, worded for the user, with its own exit code.

Exceptions that never leave their module stay there: `SettleTimeout` (the runner's settle
loop), `CaseFailed` (a pytest item's verdict), `_Failed` (one conformance check), and the
server's `Unauthorized` and `KeyReused` (each turned into its HTTP answer at once).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memeval.engines.types import Capability


class MemevalError(Exception):
    """An error the CLI prints as one clear message and turns into a non-zero exit code."""

    exit_code = 1

    def __init__(self, message: str, *, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def render(self) -> str:
        return self.message + (f"\n  fix: {self.fix}" if self.fix else "")


class UsageError(MemevalError):
    """Bad options or settings: the command line or the environment must change."""

    exit_code = 2


class SuiteError(MemevalError):
    """A suite file that cannot be used, located as precisely as the parser allows."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        field: str = "",
        fix: str = "",
        more: list[str] | None = None,
    ) -> None:
        super().__init__(message, fix=fix)
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.more = more or []

    def at(self, path: Path | str) -> SuiteError:
        self.path = str(path)
        return self

    def render(self) -> str:
        where = self.path or "<suite>"
        if self.line is not None:
            where += f":{self.line}"
        head = f"{where}: " + (f"field `{self.field}`: " if self.field else "") + self.message
        lines = [head, *(f"  also {m}" for m in self.more)]
        if self.fix:
            lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)


class UnknownRun(UsageError):
    """A run id, label or `latest` that names no run in the store, usually a typo."""

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"no run `{run_id}` in the results store",
            fix="`memeval runs` lists the runs with their ids and labels",
        )
        self.run_id = run_id


class RefusedStop(UsageError):
    """The run stopped on its first cases' refusal: a setting to change, exit 2."""


class GateFailed(MemevalError):
    """A CI gate of `memeval run`/`report` failed; `memeval.report.gate` picks the code."""

    def __init__(self, message: str, *, exit_code: int, fix: str = "") -> None:
        super().__init__(message, fix=fix)
        self.exit_code = exit_code


class BrokerGone(MemevalError):
    """The broker stayed unreachable past the patience the settings allow."""


class WorkerRefused(MemevalError):
    """A worker's verdict, with the exit code the worker chose for it."""

    def __init__(self, message: str, *, fix: str, exit_code: int) -> None:
        super().__init__(message, fix=fix)
        self.exit_code = exit_code


# ---- the engine's errors: what an engine raises for what is not a memory failure ----------


class Unsupported(Exception):
    """The engine lacks the capability a call needs."""

    def __init__(self, capability: Capability) -> None:
        super().__init__(f"engine does not support `{capability}`")
        self.capability = capability


class EngineUnavailable(Exception):
    """The engine could not be reached or broke down: infrastructure, so the case is retried.

    Anything else an engine raises is a memory failure and is scored, not retried.
    """


class EngineRefused(Exception):
    """The engine answered, but not with anything memeval can score: a 4xx other than a
    documented "not found", or a reply that does not parse.

    Not a memory failure (a refused recall says nothing about what the engine remembers), so
    never scored; not transient either (the same call would be refused again), so not retried.
    The case is an error naming engine, route, status and the vendor's code, and the same
    refusal on a run's first cases stops the run (`memeval.runner.refusals`)."""

    def __init__(
        self,
        message: str,
        *,
        engine: str = "",
        route: str = "",
        status: int | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.engine, self.route, self.status, self.code = engine, route, status, code

    @property
    def signature(self) -> str:
        """What makes two refusals "the same": the engine, the method, the status and the
        vendor's code (not the path, which may name the tenant)."""
        method = self.route.split(" ", 1)[0] if self.route else "reply"
        parts = [self.engine, method, str(self.status or "unparsed"), self.code or ""]
        return " ".join(p for p in parts if p)


class AuthRejected(MemevalError, EngineRefused):
    """401 or 403: the key is missing, wrong or out of credit; the fix names its variable."""

    exit_code = 2


# ---- out of credit: two accounts, two courses of action ------------------------------------


class OutOfCredit(MemevalError):
    """An account cannot pay for another call. Which account decides what happens, so code
    catches one of the two subclasses; this base lets a caller of `memeval.evaluate` catch
    either."""


class CreditsExhausted(OutOfCredit):
    """The engine's account has run out of credit (HTTP 402): no later case can succeed, so
    the run stops as "credits exhausted" (exit 6) instead of scoring every remaining case an
    error; the cases not yet run are marked skipped, to be resumed once it is topped up.

    An engine raises it with the vendor's words; the run's stop is the same error, reworded
    for the user with the `--resume` command as its fix."""

    exit_code = 6


# ---- the model's errors: one class per course of action ------------------------------------


class LlmError(MemevalError):
    """A model call failed. Messages carry the service's words, never the request's headers."""

    retryable = False

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class Transient(LlmError):
    """408, 5xx, a timeout, a dropped connection or an error inside a 200: try again later."""

    retryable = True


class Unreachable(Transient):
    """Nothing answers at the service's address (refused, no route, bad scheme): no request
    went out, so a run set up against it must stop and name the URL."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class RateLimited(Transient):
    """429: everyone sharing the model's limiter must wait `retry_after` seconds."""


class InFlightBudget(Transient):
    """402 with `limit_source` = in-flight budget: the balance is fine, calls are settling."""


class MaybeBilled(Transient):
    """The request went out and no answer came back (a read timeout, a dropped connection):
    the service may have billed it, so its hold is counted as spent, never released."""


class ModelCreditsExhausted(LlmError, OutOfCredit):
    """402 (or a 403 naming a budget): the model's key or account cannot pay; no paid call may
    start. Unlike the engine's `CreditsExhausted` the run goes on: its answers are skipped as
    over budget, and the engine's memory is still measured."""


class AuthError(UsageError):
    """401, or a 403 for a key that lacks permission: nothing will work until the key changes."""

    def __init__(self, message: str, *, env_var: str, fix: str) -> None:
        super().__init__(message, fix=fix)
        self.env_var = env_var


class Rejected(LlmError):
    """400, a moderation or guardrail 403, an unknown model: this request will never pass."""
