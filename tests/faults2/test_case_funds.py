"""A spent budget yields whole cases: each case holds its whole model spend (its fund) before
its first call, and its calls draw on it. Before, calls held one at a time, and with eight
workers 92% of a $0.02 budget bought answers for cases that then stored `skipped_budget`.

Against the farm's budget in real Redis and the in-process one in memory, and end to end with
`memeval run` (embedded farm and `--in-process`) against a fake OpenRouter whose billing log is
the truth."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from memeval.llm.in_memory import MemoryState
from memeval.llm.shared import SpendBudget
from memeval.results import CaseStatus, RunReport
from memeval_farm.budget import Budget, connect_redis
from tests.llm.redis_support import REDIS_URL

OpenBudget = Callable[[str], AbstractAsyncContextManager[SpendBudget]]


@asynccontextmanager
async def in_redis(scope: str) -> AsyncIterator[SpendBudget]:
    redis = await connect_redis(REDIS_URL)
    try:
        yield Budget(redis, [scope])
    finally:
        await redis.aclose()


@asynccontextmanager
async def in_memory(scope: str) -> AsyncIterator[SpendBudget]:
    yield MemoryState().budget([scope])


@pytest.mark.parametrize("opened", [in_redis, in_memory], ids=["redis", "memory"])
def test_a_case_fund_is_room_only_its_own_calls_take(opened: OpenBudget, tag: str) -> None:
    scope = f"run:{tag}"

    async def go() -> None:
        async with opened(scope) as budget:
            await budget.open(scope, 1000)
            fund = await budget.fund(600)
            assert fund is not None and fund.amount_micros == 600
            # Another case's call finds the fund taken: it waits, and the scope stays open.
            assert await budget.reserve(500, max_wait_s=0.2) is None
            assert not await budget.closed()
            call = await budget.reserve(500, within=fund)  # the fund's own call goes at once
            assert call is not None and call.amount_micros == 500
            state = await budget.state(scope)
            assert (state.reserved_micros, state.funded_micros) == (500, 100)
            await budget.settle(call, 200)
            assert await budget.unfund(fund) == 100  # the case ended: the rest goes back
            assert await budget.unfund(fund) == 0  # twice releases nothing
            state = await budget.state(scope)
            assert (state.spent_micros, state.reserved_micros, state.funded_micros) == (200, 0, 0)
            # A case larger than the whole cap is refused and closes nothing: it says nothing
            # of the other cases.
            assert await budget.fund(1001, max_wait_s=5) is None
            assert not await budget.closed()
            smaller = await budget.fund(700)
            assert smaller is not None
            # A call the fund falls short of takes the rest from the budget, not past the cap.
            topped = await budget.reserve(750, min_micros=700, within=smaller)
            assert topped is not None and topped.amount_micros == 750
            await budget.settle(topped, 750)
            assert await budget.unfund(smaller) == 0
            state = await budget.state(scope)
            assert (state.spent_micros, state.funded_micros) == (950, 0)
            # A case that would fit an unspent budget but not this one: the money is gone, and
            # the budget closes, so no later, smaller case sneaks in (a sweep's models then
            # cover the same cases). A case started before may still finish: here its fund is
            # drawn down, and a last call longer than planned tops it up from what is left.
            started = await budget.fund(30)
            assert started is not None
            drawn = await budget.reserve(30, within=started)
            assert drawn is not None
            await budget.settle(drawn, 30)
            assert await budget.fund(100, max_wait_s=5) is None
            assert await budget.closed()
            assert await budget.reserve(10, max_wait_s=0.2) is None  # no fund: closed
            last = await budget.reserve(15, within=started)
            assert last is not None and last.amount_micros == 15
            await budget.settle(last, 15)
            assert await budget.unfund(started) == 0
            assert (await budget.state(scope)).spent_micros == 995

    asyncio.run(go())


def test_a_vanished_workers_fund_lapses_released_not_spent(tag: str) -> None:
    """A worker that dies mid-case leaves its fund to its lease: nothing was sent from what is
    left of it, so it returns to the budget (an in-flight call's hold still counts in full)."""
    scope = f"run:{tag}"

    async def go() -> None:
        async with in_redis(scope) as budget:
            assert isinstance(budget, Budget)
            await budget.open(scope, 1000)
            fund = await budget.fund(800, lease_s=0.05)
            assert fund is not None
            call = await budget.reserve(300, within=fund, lease_s=0.05)
            assert call is not None
            await asyncio.sleep(0.2)
            after = await budget.reserve(100)  # any caller sweeps the lapsed leases first
            assert after is not None
            state = await budget.state(scope)
            assert state.funded_micros == 0
            assert (state.spent_micros, state.reserved_micros) == (300, 100)

    asyncio.run(go())


@pytest.mark.parametrize("where", [[], ["--in-process"]], ids=["farm", "in-process"])
def test_a_spent_budget_leaves_whole_cases_and_no_unscored_spend(cli, server, tmp_path, where):
    """Eight workers and a budget that holds a handful of cases at a time: every case that
    started its model calls finishes them, so no money buys answers that are not scored."""
    out = tmp_path / "out"
    done = cli(
        "run", "--suite", "dimensions", "--llm", "--model", "test/cheap",
        "--base-url", server.base_url, "--budget-usd", "0.01", "--workers", "8",
        "--out", str(out), *where,
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}"},
    )  # fmt: skip
    assert done.returncode == 5, done.stdout + done.stderr  # the budget bound
    report = RunReport.model_validate_json((out / "report.json").read_text())
    scored = [c for c in report.cases if c.status is CaseStatus.done]
    skipped = [c for c in report.cases if c.status is CaseStatus.skipped_budget]
    assert len(scored) + len(skipped) == len(report.cases) == 50
    assert len(scored) >= 3 and skipped, (len(scored), len(skipped))
    for case in skipped:  # skipped before its first call: nothing bought, nothing answered
        assert case.answerer_usd_micros == 0, case.case_id
        assert all(q.model_answer is None for q in case.queries), case.case_id
    for case in scored:  # finished: every answerable query answered
        assert all(q.model_answer is not None for q in case.queries if q.pack), case.case_id
    billed = server.billed_micros
    assert 0 < billed == sum(c.answerer_usd_micros for c in scored) <= 10_000
    assert f"model spend: 100.0% of ${billed / 1e6:.4f} reached a score" in done.stdout
