"""Rate limits and budgets kept in this process's memory: the shared state of a run that has
no farm, so `memeval.evaluate` and tests can cap spend and pace calls without Redis.

They follow the Redis ones' rules (GCRA admission, a 429 pushing the key back, holds that fit
every scope or none, the budget's tail handed out to a call that can use less) within one
event loop. What only a farm needs is left out: leases for vanished workers, a queue shared by
processes, keys that expire.
"""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Literal

from memeval.llm.rates import MAX_PAUSE_S, Rate
from memeval.llm.shared import BudgetState, Hold, OpenShared, SharedState

MAX_POLL_S = 0.2
MAX_WAIT_S = 900.0
SAMPLES = 500


class MemoryLimiter:
    """GCRA per (kind, name) on this process's monotonic clock. A caller takes the next free
    slot and sleeps until it, as the farm's limiter does (`memeval_farm.limiter`), so waiters
    queue instead of all waking for each slot."""

    def __init__(self) -> None:
        self._tat: dict[str, float] = {}  # key -> theoretical arrival time, seconds
        self._pauses: dict[str, int] = {}  # key -> pauses so far

    @staticmethod
    def key(rate: Rate, name: str) -> str:
        return f"{rate.kind.value}:{name}"

    async def acquire(self, rate: Rate, name: str) -> float:
        """The time of the slot granted; a pause while it waits sends it back for a later one."""
        key = self.key(rate, name)
        interval = rate.interval_us / 1e6
        while True:
            now = time.monotonic()
            tat = max(self._tat.get(key, now), now)
            self._tat[key] = tat + interval
            slot = max(now, tat - interval * (rate.burst - 1))
            if slot <= now:
                return now
            pauses = self._pauses.get(key, 0)
            await asyncio.sleep(slot - now)
            if self._pauses.get(key, 0) == pauses:
                return slot

    async def pause(self, rate: Rate, name: str, seconds: float) -> float:
        now = time.monotonic()
        tau = rate.interval_us / 1e6 * (rate.burst - 1)
        target = now + min(max(seconds, 0.0), MAX_PAUSE_S) + tau
        key = self.key(rate, name)
        self._pauses[key] = self._pauses.get(key, 0) + 1
        self._tat[key] = max(self._tat.get(key, now), target)
        return self._tat[key] - tau - now


@dataclass
class _Scope:
    cap: int
    spent: int = 0
    reserved: int = 0
    funded: int = 0
    calls: int = 0
    closed: str | None = None
    overbilled: int = 0
    overbilled_calls: int = 0
    holds: dict[str, int] = field(default_factory=dict)
    funds: dict[str, int] = field(default_factory=dict)  # case fund id -> what is left of it
    samples: list[int] = field(default_factory=list)


class MemoryBudget:
    """A view on some scopes of a `MemoryState`; every budget of that state sees the same
    spend, as every worker's `memeval_farm.budget.Budget` sees the same Redis."""

    def __init__(self, scopes: dict[str, _Scope], names: list[str]) -> None:
        if not names:
            raise ValueError("a budget needs at least one scope")
        self._all = scopes
        self.scopes = names

    def _scope(self, name: str) -> _Scope:
        if name not in self._all:
            raise LookupError(f"budget `{name}` was never opened")
        return self._all[name]

    async def open(
        self, scope: str, cap_micros: int, *, spent_micros: int = 0, raise_cap: bool = False
    ) -> BudgetState:
        if cap_micros <= 0:
            raise ValueError("a budget cap must be positive")
        if spent_micros < 0:
            raise ValueError("a budget's spend cannot be negative")
        live = self._all.setdefault(scope, _Scope(cap=cap_micros, spent=spent_micros))
        live.spent = max(live.spent, spent_micros)
        if raise_cap and cap_micros > live.cap:
            live.cap = cap_micros
            if live.closed == "exhausted":
                live.closed = None
        return await self.state(scope)

    async def state(self, scope: str) -> BudgetState:
        s = self._scope(scope)
        return BudgetState(
            scope=scope,
            cap_micros=s.cap,
            spent_micros=s.spent,
            reserved_micros=s.reserved,
            funded_micros=s.funded,
            calls=s.calls,
            closed=s.closed,
            overbilled_micros=s.overbilled,
            overbilled_calls=s.overbilled_calls,
        )

    def _try(
        self, amount: int, least: int, *, fund: bool = False, within: Hold | None = None
    ) -> Hold | Literal[False] | None:
        """A hold (or a case's fund); False to wait for in-flight holds or funds; None when
        refused (and closed). `within`: the fund a call draws on first."""
        scopes = [self._scope(n) for n in self.scopes]
        own = 0 if within is None else min(s.funds.get(within.id, 0) for s in scopes)
        # a started case may finish even once the budget closed for want of money for new ones
        funded = within is not None and all(within.id in s.funds for s in scopes)
        grant, wait = amount, False
        for s in scopes:
            if s.closed and not (funded and s.closed == "exhausted"):
                return None
            others = s.funded - own  # promised to other started cases
            committed = s.spent + others
            if committed + least > s.cap:
                if s.reserved <= 0 and others <= 0:
                    if not fund or least <= s.cap:  # a fund above the whole cap says
                        s.closed = "exhausted"  # nothing of the other cases
                    return None
                wait = True
                continue
            need = amount
            if committed + amount > s.cap:
                need = least
                grant = min(grant, s.cap - committed - s.reserved)
            wait = wait or s.cap - committed - s.reserved < need
            # the first call settles alone; a fund sends nothing, so it need not wait
            wait = wait or (not fund and s.reserved > 0 and s.calls == 0)
        if wait:
            return False
        hold = Hold(id=secrets.token_hex(8), amount_micros=grant)
        drawn = min(grant, own)
        for s in scopes:
            if fund:
                s.funded += grant
                s.funds[hold.id] = grant
                continue
            s.reserved += grant
            s.holds[hold.id] = grant
            if within is not None and within.id in s.funds:
                s.funds[within.id] -= drawn
                s.funded -= drawn
        return hold

    async def reserve(
        self,
        amount_micros: int,
        *,
        min_micros: int | Callable[[], Awaitable[int]] | None = None,
        max_wait_s: float = MAX_WAIT_S,
        within: Hold | None = None,
    ) -> Hold | None:
        return await self._poll(amount_micros, min_micros, max_wait_s, False, within)

    async def fund(
        self,
        amount_micros: int,
        *,
        min_micros: int | Callable[[], Awaitable[int]] | None = None,
        max_wait_s: float = MAX_WAIT_S,
    ) -> Hold | None:
        return await self._poll(amount_micros, min_micros, max_wait_s, True, None)

    async def unfund(self, fund: Hold) -> int:
        released = 0
        for name in self.scopes:
            s = self._scope(name)
            left = s.funds.pop(fund.id, None)
            if left is not None:
                s.funded -= left
                released = left
        return released

    async def _poll(
        self,
        amount_micros: int,
        min_micros: int | Callable[[], Awaitable[int]] | None,
        max_wait_s: float,
        fund: bool,
        within: Hold | None,
    ) -> Hold | None:
        deadline = time.monotonic() + max_wait_s
        pause = 0.01
        amount = max(0, amount_micros)
        while True:
            asked = await min_micros() if callable(min_micros) else min_micros
            least = amount if asked is None else max(0, min(asked, amount))
            outcome = self._try(amount, least, fund=fund, within=within)
            if outcome is not False:
                return outcome
            if time.monotonic() >= deadline:
                return None
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, MAX_POLL_S)

    def _finish(self, hold: Hold, actual: int, counted: bool, tokens: int | None) -> int:
        over = 0
        for name in self.scopes:
            s = self._scope(name)
            held = s.holds.pop(hold.id, None)
            if held is None:
                continue
            s.reserved -= held
            s.spent += actual
            if not counted:
                continue
            s.calls += 1
            if actual > held:
                over = actual - held
                s.overbilled += over
                s.overbilled_calls += 1
                s.closed = s.closed or "overbilled"
            if tokens is not None:
                s.samples = [*s.samples, max(0, tokens)][-SAMPLES:]
        return over

    async def settle(
        self, hold: Hold, actual_micros: int, *, completion_tokens: int | None = None
    ) -> int:
        return self._finish(hold, max(0, actual_micros), True, completion_tokens)

    async def settle_at_hold(self, hold: Hold) -> None:
        await self.settle(hold, hold.amount_micros)

    async def release(self, hold: Hold) -> None:
        self._finish(hold, 0, False, None)

    async def completion_tokens(self, quantile: float = 0.95, *, least: int = 1) -> int | None:
        sizes = sorted(self._scope(self.scopes[0]).samples)
        if len(sizes) < max(1, least):
            return None
        return sizes[max(0, math.ceil(quantile * len(sizes)) - 1)]  # nearest rank

    async def close(self, reason: str) -> None:
        for name in self.scopes:
            s = self._scope(name)
            s.closed = s.closed or reason

    async def closed(self) -> bool:
        return any(self._scope(n).closed for n in self.scopes)


class MemoryState:
    """One run's limits and budgets, for as long as this object lives."""

    def __init__(self) -> None:
        self._limiter = MemoryLimiter()
        self._scopes: dict[str, _Scope] = {}

    def limiter(self) -> MemoryLimiter:
        return self._limiter

    def budget(self, scopes: list[str]) -> MemoryBudget:
        return MemoryBudget(self._scopes, scopes)

    def opener(self) -> OpenShared:
        """This state as an `OpenShared`: every opening yields the same state."""

        @asynccontextmanager
        async def opened() -> AsyncIterator[SharedState]:
            yield self

        return opened
