"""What a run shares with every other worker of its farm, as protocols the core calls.

The runner and the answerer need a rate limiter (engine and model calls), a budget (hold,
settle, release) and somewhere both live. On the farm that is Redis (`memeval_farm.limiter`,
`memeval_farm.budget`, `memeval_farm.redis_state`); in one process it can be memory
(`memeval.llm.in_memory`). The core only sees these protocols, so it never imports the shell:
the shell passes its implementation in through an `OpenShared` factory.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from pydantic import BaseModel

from memeval.llm.rates import Rate


def usd_to_micros(usd: float) -> int:
    return round(usd * 1_000_000)


class Hold(BaseModel):
    id: str
    amount_micros: int  # what was granted: the full amount asked, or less at the budget's tail


class BudgetState(BaseModel):
    scope: str
    cap_micros: int
    spent_micros: int = 0
    reserved_micros: int = 0  # held by calls in flight
    funded_micros: int = 0  # promised to started cases, not yet drawn by their calls
    calls: int = 0
    closed: str | None = None
    overbilled_micros: int = 0  # billed above the holds: the service broke the holds' bound
    overbilled_calls: int = 0

    @property
    def spent_usd(self) -> float:
        return self.spent_micros / 1e6

    @property
    def cap_usd(self) -> float:
        return self.cap_micros / 1e6


class RateLimiter(Protocol):
    """Admits calls for one (kind, name) pair at its rate, whoever asks."""

    async def acquire(self, rate: Rate, name: str) -> float:
        """Wait for admission; returns the limiter's clock, in seconds, when it was granted."""
        ...

    async def pause(self, rate: Rate, name: str, seconds: float) -> float:
        """A 429: hold every caller on this key for `seconds` (at most `MAX_PAUSE_S`);
        returns how long the key is now held."""
        ...


class SpendBudget(Protocol):
    """One or more scopes charged together: a hold fits all of them or none."""

    async def open(
        self, scope: str, cap_micros: int, *, spent_micros: int = 0, raise_cap: bool = False
    ) -> BudgetState: ...

    async def state(self, scope: str) -> BudgetState: ...

    async def reserve(
        self,
        amount_micros: int,
        *,
        min_micros: int | Callable[[], Awaitable[int]] | None = None,
        max_wait_s: float = ...,
        within: Hold | None = None,
    ) -> Hold | None:
        """A hold of `amount_micros`, or at the budget's tail of less but at least
        `min_micros` (asked again before every poll); None once the budget is spent, or when
        in-flight holds still fill it after `max_wait_s`. `within`: the case fund the call
        draws on first; what is left of it is room only that case's calls may take."""
        ...

    async def fund(
        self,
        amount_micros: int,
        *,
        min_micros: int | Callable[[], Awaitable[int]] | None = None,
        max_wait_s: float = ...,
    ) -> Hold | None:
        """A case's whole model spend, held before its first call so that it can finish; None
        when the budget cannot hold it. The same rules as `reserve`, but nothing is sent
        against a fund, so it does not wait for the first call to settle."""
        ...

    async def unfund(self, fund: Hold) -> int:
        """The case has ended: what is left of its fund returns to the budget (and is
        returned); a second call releases nothing."""
        ...

    async def settle(
        self, hold: Hold, actual_micros: int, *, completion_tokens: int | None = None
    ) -> int:
        """Count the call's true cost; returns how much it was billed above its hold."""
        ...

    async def settle_at_hold(self, hold: Hold) -> None: ...

    async def release(self, hold: Hold) -> None: ...

    async def completion_tokens(self, quantile: float = 0.95, *, least: int = 1) -> int | None:
        """The `quantile` of the completion sizes settled so far, None while fewer than
        `least` calls have settled."""
        ...

    async def close(self, reason: str) -> None: ...

    async def closed(self) -> bool: ...


class SharedState(Protocol):
    """Where the limits and budgets a run shares with the other workers live."""

    def limiter(self) -> RateLimiter: ...

    def budget(self, scopes: list[str]) -> SpendBudget: ...


OpenShared = Callable[[], AbstractAsyncContextManager[SharedState]]
"""Opens the shared state for as long as a case (or a run) needs it; called only when the run
sets a rate or a budget, so a run without them never needs Redis."""
