"""How much of a cap a run spends, measured by the model service's own billing log.

The real Answerer (holds in Redis, paid calls recorded, learned tail holds) answers questions
from packs of varying size against the local fake OpenRouter of the tests, which bills as the
service would: an `openai/` model by OpenAI's published token counting, any other model by a
token per four characters (there the hold falls back to the byte bound). For each cap and
concurrency it prints what the service billed, the share of the cap, the overspend (billed
minus cap: must never be positive), the calls billed, the tail answers cut short by a smaller
`max_tokens`, and the median hold over bill.

    python benchmarks/budget_spend.py [--calls 400] [--redis-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import uuid
from decimal import Decimal

from memeval.llm.answer import AnswerResult, PaidCalls
from memeval.llm.pricing import Price
from memeval.llm.prompt import messages
from memeval.llm.spec import LlmSpec
from memeval.store.models import PaidCall
from memeval_farm.budget import Budget, connect_redis
from memeval_farm.redis_state import open_answerer
from tests.llm.server import KEY, FakeOpenRouter

PRICES = {"openai/gpt-4.1-mini": (1, 4), "other/model": (1, 4)}  # micro-USD per token
LINES = [
    "- The billing service listens on port 8443.",
    "- Ada Lovelace moved to Turin in March 2021.",
    "- The staging cluster runs on three nodes in Frankfurt, behind the eu-west gateway.",
    "- Invoices are archived after 400 days, then deleted.",
    "- The on-call rota changes every Monday at 09:00 UTC, and the handover note goes to the "
    "#ops channel with the open incidents listed first and the pager owner named.",
    "- Maya's preferred editor is Helix; she switched from Vim in 2023.",
    "- Release 4.2 shipped on 2026-03-14 with the new export format.",
]
QUESTIONS = [
    "Which port does the billing service listen on?",
    "Where did Ada Lovelace move?",
    "Where does the staging cluster run?",
    "When are invoices deleted?",
    "When does the on-call rota change, and where does the handover note go?",
    "Which editor does Maya prefer?",
    "When did release 4.2 ship?",
]


def workload(count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        lines = rng.sample(LINES, rng.randint(1, len(LINES)))
        pack = "# Memory\n\n## Documents\n" + "\n".join(lines * rng.randint(1, 6)) + "\n"
        out.append((rng.choice(QUESTIONS), pack))
    return out


def full_hold(spec: LlmSpec, work: list[tuple[str, str]]) -> int:
    return round(statistics.mean(spec.hold_micros(messages(q, p)) for q, p in work))


async def one_run(
    server: FakeOpenRouter,
    redis_url: str,
    model: str,
    cap: int,
    concurrency: int,
    work: list[tuple[str, str]],
) -> dict[str, float]:
    scope = f"bench-{uuid.uuid4().hex[:8]}"
    price = Price(prompt=Decimal(1) / 1_000_000, completion=Decimal(4) / 1_000_000)
    spec = LlmSpec(model=model, base_url=server.base_url, price=price, budget_scopes=[scope])
    calls: dict[str, PaidCall] = {}
    ledger = PaidCalls(scope, lambda call: calls.__setitem__(call.call_id, call))
    redis = await connect_redis(redis_url)
    budget = Budget(redis, [scope])
    await budget.open(scope, cap)
    before_calls, before_billed = len(server.calls), server.billed_micros
    gate = asyncio.Semaphore(concurrency)
    async with open_answerer(spec, redis_url=redis_url, ledger=ledger) as answerer:

        async def ask(question: str, pack: str) -> AnswerResult:
            async with gate:
                return await answerer.answer(question, pack)

        replies = await asyncio.gather(*(ask(q, p) for q, p in work))
    for key in [k async for k in redis.scan_iter(match=f"memeval:budget:{scope}*")]:
        await redis.delete(key)
    await redis.aclose()
    billed = server.billed_micros - before_billed
    ratios = [c.held_micros / c.charged_micros for c in calls.values() if c.charged_micros]
    return {
        "billed": billed,
        "calls": len(server.calls) - before_calls,
        "cut": sum(r.skipped_budget and r.usd_micros > 0 for r in replies),  # cut at the tail
        "failed": sum(r.error is not None for r in replies),
        "ratio": statistics.median(ratios) if ratios else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="Questions offered per run.")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    os.environ["OPENROUTER_API_KEY"] = KEY
    work = workload(args.calls, seed=7)
    print(f"{args.calls} questions offered per run; packs of 1-42 lines")
    print(
        f"{'model':<20} {'cap (holds)':>11} {'in flight':>9} {'billed':>8} {'of cap':>7} "
        f"{'overspend':>9} {'calls':>6} {'cut':>4} {'hold/bill':>9}"
    )
    with FakeOpenRouter(prices=PRICES) as server:
        for model in PRICES:
            price = Price(prompt=Decimal(1) / 1_000_000, completion=Decimal(4) / 1_000_000)
            spec = LlmSpec(model=model, base_url=server.base_url, price=price)
            hold = full_hold(spec, work)
            for holds in (2, 4, 20, 60):
                cap = holds * hold
                for concurrency in (1, 8, 32):
                    got = asyncio.run(
                        one_run(server, args.redis_url, model, cap, concurrency, work)
                    )
                    over = got["billed"] - cap
                    print(
                        f"{model:<20} {holds:>11} {concurrency:>9} {got['billed']:>8,.0f} "
                        f"{got['billed'] / cap:>7.1%} {max(0, over):>9,.0f} {got['calls']:>6.0f} "
                        f"{got['cut']:>4.0f} {got['ratio']:>9.2f}"
                    )
                    assert over <= 0, f"overspend: billed {got['billed']} on a cap of {cap}"
                    assert not got["failed"], f"{got['failed']} calls failed: not a budget figure"


if __name__ == "__main__":
    main()
