"""The Answerer: a model answers one question from one memory pack, within rate and budget.

Every attempt holds its cost in the budget first, takes its rate-limit slot last, right before
the request goes out (so the service sees the limiter's spacing, not the budget's waits), and
is written to the run's paid-call records before it is sent. A reply settles the hold at its
bill; a refusal by the service releases it; a request that went out and never came back is
counted at its hold, since the service may have billed it. A refused hold makes the call
`skipped_budget`, and the answerer then starts no further paid call, so the run still ends
cleanly and its report says what was covered.

A case holds its whole model spend first (`for_case`: every answer and verdict at the hold its
call will ask, over a stand-in pack) and its calls draw their holds from that fund. A budget
that cannot fund a case skips it before it spends anything, so a spent budget leaves complete
cases, not answers bought for cases that are then not scored; the unused part of a fund goes
back when the case ends. A call the fund falls short of (a pack longer than the stand-in)
takes the rest from the budget as any call does.
"""

from __future__ import annotations

import asyncio
import copy
import math
import random
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from decimal import Decimal

from pydantic import BaseModel

from memeval.engines.pack import CHARS_PER_TOKEN
from memeval.errors import (
    LlmError,
    MaybeBilled,
    ModelCreditsExhausted,
    RateLimited,
    Rejected,
    Transient,
    UsageError,
)
from memeval.llm.client import Completion, LlmClient
from memeval.llm.estimate import PlannedAnswer
from memeval.llm.judge import JUDGE_PROMPT_VERSION, PROMPTS_SHA256, judge_messages
from memeval.llm.prompt import PROMPT_VERSION, messages
from memeval.llm.rates import RateKind, rate_for
from memeval.llm.shared import Hold, OpenShared, RateLimiter, SpendBudget
from memeval.llm.spec import LlmSpec
from memeval.llm.tokens import prompt_tokens_bound
from memeval.store.models import PaidCall, PaidState

BACKOFF_S = 0.5
BACKOFF_MAX_S = 30.0
LEARN_AFTER = 5
"""Settled calls needed before holds learn the completion size; until then every call holds
the full `max_tokens`. Five is few, but their 95th percentile is then their largest, and a
tail answer that still needs more is cut, skipped and paid for: never an overspend."""
COMPLETION_QUANTILE = 0.95


class AnswerResult(BaseModel):
    text: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd_micros: int = 0
    skipped_budget: bool = False
    error: str | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class PaidCalls:
    """Where an answerer writes each paid call: the run it pays for, and the store's writer."""

    run_id: str
    record: Callable[[PaidCall], None]


class Answerer:
    def __init__(
        self,
        spec: LlmSpec,
        client: LlmClient,
        *,
        budget: SpendBudget | None = None,
        limiter: RateLimiter | None = None,
        ledger: PaidCalls | None = None,
    ) -> None:
        known = spec.prompt_version in (PROMPT_VERSION, JUDGE_PROMPT_VERSION)
        if not known or spec.prompts_sha256 != PROMPTS_SHA256:
            raise UsageError(
                f"the run asks for prompt {spec.prompt_version} (prompts "
                f"{spec.prompts_sha256[:12]}) but this worker has {PROMPT_VERSION} "
                f"(prompts {PROMPTS_SHA256[:12]})",
                fix="run the same memeval version on the workers as where the run started",
            )
        if spec.budget_scopes and budget is None:
            raise UsageError("a budgeted run needs Redis", fix="pass the farm's Redis URL")
        self.spec = spec
        self.client = client
        self.budget = budget
        self.limiter = limiter
        self.ledger = ledger
        self.rate = rate_for(spec.rates, RateKind.model)
        self._spent_out = False
        self._fund: Hold | None = None  # the case fund this answerer's calls draw on
        self.judges: list[Answerer] = []  # `--judge`: grade answers on the same budget

    def __repr__(self) -> str:
        return f"Answerer(model={self.spec.model!r}, base_url={self.spec.base_url!r})"

    async def exhausted(self) -> bool:
        """True once no paid call may start; checked before a case begins, so the cases after
        the budget ran out are recorded as skipped instead of being run half-way."""
        if not self._spent_out and self.budget is not None:
            self._spent_out = await self.budget.closed()
        return self._spent_out

    @asynccontextmanager
    async def for_case(self, planned: list[PlannedAnswer]) -> AsyncIterator[Answerer | None]:
        """This answerer for one case, its whole model spend held first; None when no paid
        call may start or the budget cannot hold the case: it is then skipped before it
        spends anything. Whatever the case leaves of its fund returns when it ends, however
        it ends; a worker that vanishes leaves it to lapse, released, with its lease."""
        if await self.exhausted():
            yield None
            return
        budget = self.budget
        if budget is None:
            yield self
            return
        full = self._case_micros(planned, None)

        async def least() -> int:
            learned = await budget.completion_tokens(COMPLETION_QUANTILE, least=LEARN_AFTER)
            return full if learned is None else min(full, self._case_micros(planned, learned))

        fund = await budget.fund(full, min_micros=least)
        if fund is None:
            yield None
            return
        try:
            yield self._drawing_on(fund)
        finally:
            await asyncio.shield(budget.unfund(fund))

    def _drawing_on(self, fund: Hold) -> Answerer:
        """A view of this answerer (same client, budget, limiter, records) whose calls and
        whose judges' calls draw on `fund` first."""
        view = copy.copy(self)
        view._fund = fund
        view.judges = [judge._drawing_on(fund) for judge in self.judges]
        return view

    def _case_micros(self, planned: list[PlannedAnswer], completion: int | None) -> int:
        """What the planned calls hold, each answer (and each judge's verdict on a probe's
        answer) asking for `completion` tokens at most, or its `max_tokens`."""
        total = 0
        for call in planned:
            tokens = self._capped(completion)
            total += self.spec.hold_micros(messages(call.question, call.pack), tokens)
            if call.gold is None:
                continue
            answer = call.pack[: tokens * CHARS_PER_TOKEN]  # an answer as long as allowed
            for judge in self.judges:
                chat = judge_messages(call.question, call.gold, answer, call.kind,
                                      self.spec.judge_mode)  # fmt: skip
                total += judge.spec.hold_micros(chat, judge._capped(completion))
        return total

    def _capped(self, completion: int | None) -> int:
        top = self.spec.max_tokens
        return top if completion is None else max(1, min(completion, top))

    async def answer(self, question: str, pack: str) -> AnswerResult:
        return await self.complete(messages(question, pack))

    async def complete(self, chat: list[dict[str, str]]) -> AnswerResult:
        """One paid call on a prompt already built: the answer prompt, or the judge's."""
        if self._spent_out:
            return AnswerResult(skipped_budget=True)
        prompt = prompt_tokens_bound(self.spec.model, chat)
        last = ""
        for attempt in range(self.spec.max_attempts):
            hold: Hold | None = None
            max_tokens = self.spec.max_tokens
            if self.budget is not None:
                hold = await self._reserve(self.budget, prompt)
                if hold is None:
                    self._spent_out = True
                    return AnswerResult(skipped_budget=True)
                max_tokens = self._affordable(prompt, hold.amount_micros)
            sending = False
            try:
                if hold is not None:  # recorded before it can be billed
                    self._record(hold, PaidState.sent, hold.amount_micros)
                if self.limiter is not None and self.rate is not None:
                    await self.limiter.acquire(self.rate, self.spec.model)
                sending = True
                completion = await self.client.chat(self.spec.model, chat, max_tokens=max_tokens)
            except ModelCreditsExhausted as exc:
                await self._release(hold)
                await self._stop_paying(exc.message)
                return AnswerResult(skipped_budget=True, error=exc.message)
            except RateLimited as exc:
                await self._release(hold)
                await self._wait_out_429(exc.retry_after or _backoff(attempt))
                last = exc.message
            except MaybeBilled as exc:
                await self._count_at_hold(hold)
                await asyncio.sleep(exc.retry_after or _backoff(attempt))
                last = exc.message
            except Transient as exc:
                await self._release(hold)
                await asyncio.sleep(exc.retry_after or _backoff(attempt))
                last = exc.message
            except Rejected as exc:
                await self._release(hold)
                return AnswerResult(error=exc.message)
            except BaseException as exc:
                answered = isinstance(exc, (LlmError, UsageError))  # the service said no
                if sending and not answered:  # cancelled with the request out: maybe billed
                    await self._count_at_hold(hold)
                else:
                    await self._release(hold)
                raise
            else:
                return await self._settle(hold, completion, max_tokens)
        return AnswerResult(error=f"gave up after {self.spec.max_attempts} attempts: {last}")

    async def _reserve(self, budget: SpendBudget, prompt: int) -> Hold | None:
        """Hold the full cost of the call; at the budget's tail, accept a hold that still
        covers the completion size most settled calls needed (the call then asks for fewer
        tokens, so the service cannot bill past the hold)."""
        full = self._micros(prompt, self.spec.max_tokens)

        async def least() -> int:
            learned = await budget.completion_tokens(COMPLETION_QUANTILE, least=LEARN_AFTER)
            if learned is None or learned >= self.spec.max_tokens:
                return full
            return self._micros(prompt, max(1, learned))

        return await budget.reserve(full, min_micros=least, within=self._fund)

    def _micros(self, prompt: int, completion: int) -> int:
        price = self.spec.price
        return 0 if price is None else price.micros(prompt, completion)

    def _affordable(self, prompt: int, granted: int) -> int:
        """The most completion tokens a hold of `granted` pays for, up to `max_tokens`."""
        top = self.spec.max_tokens
        if self._micros(prompt, top) <= granted:
            return top
        low, high = 1, top  # micros(prompt, low) <= granted: the budget granted at least that
        while low < high:
            mid = (low + high + 1) // 2
            if self._micros(prompt, mid) <= granted:
                low = mid
            else:
                high = mid - 1
        return low

    async def _settle(
        self, hold: Hold | None, completion: Completion, max_tokens: int
    ) -> AnswerResult:
        cost = self._cost(completion)
        if self.budget is not None and hold is not None:
            await asyncio.shield(
                self.budget.settle(hold, cost, completion_tokens=completion.completion_tokens)
            )
            self._record(hold, PaidState.billed, cost, completion)
        cut = max_tokens < self.spec.max_tokens and (
            completion.truncated or completion.completion_tokens >= max_tokens
        )
        # A tail answer cut short by the budget is not scored: its case is skipped, its money
        # counted; the next call may still fit, so the answerer goes on.
        return AnswerResult(
            text=None if cut else completion.text,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            usd_micros=cost,
            skipped_budget=cut,
        )

    def _cost(self, completion: Completion) -> int:
        """`usage.cost` is what was billed; token prices are the fallback for other servers."""
        if completion.cost_usd is not None:
            return math.ceil(Decimal(str(completion.cost_usd)) * 1_000_000)
        if self.spec.price is None:
            return 0
        return self.spec.price.micros(completion.prompt_tokens, completion.completion_tokens)

    def _record(
        self, hold: Hold, state: PaidState, charged: int, completion: Completion | None = None
    ) -> None:
        if self.ledger is None:
            return
        self.ledger.record(
            PaidCall(
                call_id=hold.id,
                run_id=self.ledger.run_id,
                model=self.spec.model,
                state=state,
                held_micros=hold.amount_micros,
                charged_micros=charged,
                prompt_tokens=None if completion is None else completion.prompt_tokens,
                completion_tokens=None if completion is None else completion.completion_tokens,
            )
        )

    async def _release(self, hold: Hold | None) -> None:
        if self.budget is not None and hold is not None:
            await asyncio.shield(self.budget.release(hold))
            self._record(hold, PaidState.unbilled, 0)

    async def _count_at_hold(self, hold: Hold | None) -> None:
        """The request left and no reply came: the service may bill it, so it counts in full
        (and stays in the paid-call records at its hold)."""
        if self.budget is not None and hold is not None:
            await asyncio.shield(self.budget.settle_at_hold(hold))
            self._record(hold, PaidState.unknown, hold.amount_micros)

    async def _stop_paying(self, reason: str) -> None:
        """The service itself says the money is gone: stop every worker, not just this one."""
        self._spent_out = True
        if self.budget is not None:
            await self.budget.close(f"service: {reason}")

    async def _wait_out_429(self, seconds: float) -> None:
        """Push the shared limiter back, so every worker pauses, not only the one told."""
        if self.limiter is not None and self.rate is not None:
            await self.limiter.pause(self.rate, self.spec.model, seconds)
        else:
            await asyncio.sleep(seconds)


def _backoff(attempt: int) -> float:
    """Exponential with full jitter, so workers that failed together do not retry together."""
    return random.uniform(0, min(BACKOFF_MAX_S, BACKOFF_S * 2**attempt))


@asynccontextmanager
async def open_answerer(
    spec: LlmSpec, *, shared: OpenShared | None = None, ledger: PaidCalls | None = None
) -> AsyncIterator[Answerer]:
    """An answerer with its client, budget and limiter, closed on exit. The shared state is
    opened only for budget scopes or rates; the key is read here, from this process's
    environment."""
    client = LlmClient(spec.base_url, timeout_s=spec.timeout_s)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(client.aclose)
        state = None
        if spec.budget_scopes or spec.rates:
            if shared is None:
                raise UsageError(
                    "budgets and rate limits need Redis", fix="pass the farm's Redis URL"
                )
            state = await stack.enter_async_context(shared())
        budget = state.budget(spec.budget_scopes) if state and spec.budget_scopes else None
        limiter = state.limiter() if state and spec.rates else None
        answerer = Answerer(spec, client, budget=budget, limiter=limiter, ledger=ledger)
        answerer.judges = [
            Answerer(judge, client, budget=budget, limiter=limiter, ledger=ledger)
            for judge in spec.judges
        ]
        yield answerer


@asynccontextmanager
async def answerer_for(
    spec: LlmSpec | None, *, shared: OpenShared | None = None, ledger: PaidCalls | None = None
) -> AsyncIterator[Answerer | None]:
    """What a case run wraps around `run_case`: no answerer when the run has no model. With
    a `ledger`, every paid call is also written to the run's records in the store."""
    if spec is None:
        yield None
        return
    async with open_answerer(spec, shared=shared, ledger=ledger) as answerer:
        yield answerer
