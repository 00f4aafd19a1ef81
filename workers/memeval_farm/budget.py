"""Spending caps in integer micro-USD, held in Redis and shared by every worker.

A paid call first holds its worst-case cost, then settles its true cost (or releases the hold
when it fails unbilled). The checks and updates run inside Lua scripts, so two workers can never
both take the last dollar. Holds carry a lease: a worker that dies mid-call does not pin the
money forever, and its hold is then counted as spent because the call may have been billed.

A case first holds its whole model spend (its fund), and its calls then draw their holds from
that fund, so the budget runs out between cases, not inside one: a case starts only when it can
finish, and the money of a case that ends returns what it did not use.

Near the end, a caller may accept a smaller hold (asking the service for fewer tokens), so the
last of the cap is used rather than left: each scope keeps the completion sizes of its settled
calls, from which callers learn how small a hold can still carry a typical answer.
"""

from __future__ import annotations

import asyncio
import math
import secrets
from collections.abc import Awaitable, Callable
from enum import IntEnum
from pathlib import Path
from urllib.parse import urlsplit

from redis.asyncio import Redis
from redis.exceptions import RedisError

from memeval.errors import UsageError
from memeval.llm.shared import BudgetState, Hold

LUA = Path(__file__).resolve().parent / "lua"
KEY_TTL_S = 30 * 24 * 3600
"""Budget keys outlive any run that resumes, then clean themselves up."""
LEASE_S = 900.0
"""Longer than any call with its retries, so only a vanished worker's hold ever lapses."""
MAX_POLL_S = 0.2
STALE_US = 5_000_000
"""A waiter that has not polled for this long (25 polls) is gone, and leaves the queue."""
SAMPLES = 500
"""Completion sizes kept per scope: enough for a stable 95th percentile, bounded memory."""


def redis_py_url(url: str) -> str:
    """Celery names a unix-socket Redis `redis+socket://PATH`; redis-py calls it `unix://PATH`."""
    prefix = "redis+socket://"
    return "unix://" + url.removeprefix(prefix) if url.startswith(prefix) else url


async def connect_redis(url: str) -> Redis:
    """A checked connection: budgets fail closed, so an unreachable Redis must stop the run
    at start-up with a clear message, not half-way through with a traceback."""
    redis = Redis.from_url(redis_py_url(url))
    try:
        await redis.ping()
    except (RedisError, OSError) as exc:
        await redis.aclose()
        parts = urlsplit(url)
        where = f"{parts.scheme}://{parts.hostname or ''}:{parts.port or 6379}{parts.path}"
        raise UsageError(
            f"cannot reach Redis at {where} ({type(exc).__name__})",
            fix="start Redis, or point MEMEVAL_REDIS_URL at one; budgets and rates live there",
        ) from None
    return redis


class Verdict(IntEnum):
    held = 1
    wait = 0  # in-flight holds fill the room; settling them may free it
    refused = -1  # the scope is closed: no paid call may start


class Budget:
    """One or more scopes (a run, a sweep) charged together: a hold fits all of them or none."""

    def __init__(self, redis: Redis, scopes: list[str], *, prefix: str = "memeval:") -> None:
        if not scopes:
            raise ValueError("a budget needs at least one scope")
        self.redis = redis
        self.scopes = scopes
        self.prefix = prefix
        self._reserve = redis.register_script((LUA / "budget_reserve.lua").read_text())
        self._settle = redis.register_script((LUA / "budget_settle.lua").read_text())
        self._unfund = redis.register_script((LUA / "budget_unfund.lua").read_text())

    def __repr__(self) -> str:
        return f"Budget(scopes={self.scopes!r})"

    def _state_key(self, scope: str) -> str:
        return f"{self.prefix}budget:{scope}"

    def _keys(self, *extra: str) -> list[str]:
        keys: list[str] = []
        for scope in self.scopes:
            base = self._state_key(scope)
            keys += [base, f"{base}:holds", f"{base}:leases", f"{base}:lapsed"]
            keys += [f"{base}:{name}" for name in extra]
        return keys

    async def open(
        self, scope: str, cap_micros: int, *, spent_micros: int = 0, raise_cap: bool = False
    ) -> BudgetState:
        """Create `scope` with its cap; reopening (a resumed run) keeps the spend so far.

        `spent_micros` seeds a scope this Redis has never seen, for a resume whose earlier
        spend is known only from its paid-call records; a live scope keeps its own count, or
        takes the records' figure when that is higher. `raise_cap` lifts the cap of a live
        scope to `cap_micros` (a resume given a larger budget) and reopens it if it had closed
        for want of money; a scope closed for any other reason stays closed.
        """
        if cap_micros <= 0:
            raise ValueError("a budget cap must be positive")
        if spent_micros < 0:
            raise ValueError("a budget's spend cannot be negative")
        key = self._state_key(scope)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hsetnx(key, "cap", cap_micros)
            pipe.hsetnx(key, "spent", spent_micros)
            await pipe.execute()
        state = await self.state(scope)
        if state.spent_micros < spent_micros:
            await self.redis.hincrby(key, "spent", spent_micros - state.spent_micros)
        if raise_cap and cap_micros > state.cap_micros:
            await self.redis.hset(key, "cap", cap_micros)
            if state.closed == "exhausted":
                await self.redis.hdel(key, "closed", "closed_at")
        await self.redis.expire(key, KEY_TTL_S)
        return await self.state(scope)

    async def state(self, scope: str) -> BudgetState:
        raw = await self.redis.hgetall(self._state_key(scope))
        if not raw:
            raise LookupError(f"budget `{scope}` was never opened")
        fields = {_text(k): _text(v) for k, v in raw.items()}
        return BudgetState(
            scope=scope,
            cap_micros=int(fields["cap"]),
            spent_micros=int(fields.get("spent", 0)),
            reserved_micros=int(fields.get("reserved", 0)),
            funded_micros=int(fields.get("funded", 0)),
            calls=int(fields.get("calls", 0)),
            closed=fields.get("closed"),
            overbilled_micros=int(fields.get("overbilled", 0)),
            overbilled_calls=int(fields.get("overbilled_calls", 0)),
        )

    async def try_reserve(
        self,
        amount_micros: int,
        *,
        min_micros: int | None = None,
        hold_id: str | None = None,
        lease_s: float = LEASE_S,
        fund: bool = False,
        within: Hold | None = None,
    ) -> tuple[Verdict, Hold | None]:
        """One attempt. A caller that polls must keep its `hold_id`: that is its place in the
        queue, which keeps later, smaller calls from overtaking it. With `min_micros` the
        budget's tail may grant less than `amount_micros`, never less than `min_micros`.
        `fund` holds a case's fund rather than a call's hold; `within` is the fund a call
        draws on first."""
        amount = max(0, amount_micros)
        least = amount if min_micros is None else max(0, min(min_micros, amount))
        hold_id = hold_id or secrets.token_hex(8)
        verdict, granted = await self._reserve(
            keys=self._keys("queue", "seen", "funds", "fund_leases"),
            args=[
                hold_id,
                amount,
                int(lease_s * 1e6),
                KEY_TTL_S,
                STALE_US,
                least,
                "fund" if fund else "call",
                "" if within is None else within.id,
            ],
        )
        result = Verdict(int(verdict))
        if result is not Verdict.held:
            return result, None
        return result, Hold(id=hold_id, amount_micros=int(granted))

    async def reserve(
        self,
        amount_micros: int,
        *,
        min_micros: int | Callable[[], Awaitable[int]] | None = None,
        max_wait_s: float = LEASE_S,
        lease_s: float = LEASE_S,
        within: Hold | None = None,
    ) -> Hold | None:
        """A hold, or None when the budget is spent. Waits while in-flight calls may settle for
        less than they hold, so that the cap is used up rather than refused early.

        `min_micros` may be a function, asked again before every poll: the smallest usable hold
        shrinks as the calls settling meanwhile teach it their size. `within`: the case fund
        the call draws on first (what is left of it is room no other caller can take)."""
        return await self._poll(amount_micros, min_micros, max_wait_s, lease_s, False, within)

    async def fund(
        self,
        amount_micros: int,
        *,
        min_micros: int | Callable[[], Awaitable[int]] | None = None,
        max_wait_s: float = LEASE_S,
        lease_s: float = LEASE_S,
    ) -> Hold | None:
        """A case's fund: its whole model spend, held before its first call, or None when the
        budget cannot hold it (with nothing in flight that could free room)."""
        return await self._poll(amount_micros, min_micros, max_wait_s, lease_s, True, None)

    async def unfund(self, fund: Hold) -> int:
        """Return what is left of a case's fund; returns that amount."""
        released = await self._unfund(keys=self._keys("funds", "fund_leases"), args=[fund.id])
        return max(0, int(released))

    async def _poll(
        self,
        amount_micros: int,
        min_micros: int | Callable[[], Awaitable[int]] | None,
        max_wait_s: float,
        lease_s: float,
        fund: bool,
        within: Hold | None,
    ) -> Hold | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max_wait_s
        hold_id = secrets.token_hex(8)
        pause = 0.01
        while True:
            least = await min_micros() if callable(min_micros) else min_micros
            verdict, hold = await self.try_reserve(
                amount_micros,
                min_micros=least,
                hold_id=hold_id,
                lease_s=lease_s,
                fund=fund,
                within=within,
            )
            if verdict is Verdict.held:
                return hold
            if verdict is Verdict.refused or loop.time() >= deadline:
                return None
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, MAX_POLL_S)

    async def settle(
        self, hold: Hold, actual_micros: int, *, completion_tokens: int | None = None
    ) -> int:
        """Count the call's true cost; returns how much it was billed above its hold (0 when
        the hold held). `completion_tokens` teaches later holds their size."""
        sample = "" if completion_tokens is None else str(max(0, completion_tokens))
        _, over = await self._settle(
            keys=self._keys("samples"),
            args=[hold.id, max(0, actual_micros), "1", sample, SAMPLES, KEY_TTL_S],
        )
        return int(over)

    async def settle_at_hold(self, hold: Hold) -> None:
        """A call that may have been billed, with no word of what (its reply never came): it
        counts in full, as a lapsed lease does."""
        await self.settle(hold, hold.amount_micros)

    async def release(self, hold: Hold) -> None:
        await self._settle(
            keys=self._keys("samples"), args=[hold.id, 0, "0", "", SAMPLES, KEY_TTL_S]
        )

    async def completion_tokens(self, quantile: float = 0.95, *, least: int = 1) -> int | None:
        """The `quantile` of the completion sizes settled so far in the first scope, or None
        while fewer than `least` calls have settled (too few to learn from)."""
        raw = await self.redis.lrange(f"{self._state_key(self.scopes[0])}:samples", 0, -1)
        sizes = sorted(int(v) for v in raw)
        if len(sizes) < max(1, least):
            return None
        rank = max(0, math.ceil(quantile * len(sizes)) - 1)  # nearest rank
        return sizes[rank]

    async def close(self, reason: str) -> None:
        """Stop every worker's next paid call, e.g. when the service says the key is spent."""
        for scope in self.scopes:
            await self.redis.hsetnx(self._state_key(scope), "closed", reason)

    async def closed(self) -> bool:
        for scope in self.scopes:
            if await self.redis.hexists(self._state_key(scope), "closed"):
                return True
        return False


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def open_budget(
    redis_url: str, scope: str, cap_micros: int, spent_micros: int = 0, *, raise_cap: bool = False
) -> BudgetState:
    """Create (or, on resume, reopen) a budget scope before any worker reserves against it;
    `raise_cap` for a resume given a larger budget."""
    redis = await connect_redis(redis_url)
    try:
        return await Budget(redis, [scope]).open(
            scope, cap_micros, spent_micros=spent_micros, raise_cap=raise_cap
        )
    finally:
        await redis.aclose()
