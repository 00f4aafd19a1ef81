"""Runs a sweep on the farm: one run per variant in the store, then every variant's cases as one
chord, model-interleaved, under one budget in the farm's Redis. Why it is interleaved, and the
plan and report it fills in, are `memeval.llm.sweep`'s.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from celery import Celery
from rich.console import Console

from memeval.evaluation.columns import Interleaved
from memeval.evaluation.execution import Pool
from memeval.evaluation.finalize import finalize
from memeval.evaluation.planning import new_run_id
from memeval.evaluation.preflight import check_engine
from memeval.llm.estimate import estimate
from memeval.llm.rates import parse_rates
from memeval.llm.setup import prepare
from memeval.llm.shared import usd_to_micros
from memeval.llm.sweep import (
    SWEEP_SCOPE,
    SweepConfig,
    SweepReport,
    SweptCases,
    sweep_report,
    variants,
)
from memeval.runner import RunOptions
from memeval.store import RunStatus, Store
from memeval_farm.budget import Budget, connect_redis, open_budget
from memeval_farm.farm import run_on_farm
from memeval_farm.settings import FarmSettings


def sweep(
    config: SweepConfig,
    cases: SweptCases,
    *,
    settings: FarmSettings,
    shared: Celery | None,
    store: Store,
    console: Console,
    workers: int = 1,
    pool: Pool = "prefork",
    verbose: bool = False,
) -> SweepReport:
    """Check the engines, price the models and check the key, record one run per variant, then
    run them all on the farm as one chord under one budget. Every start-up check comes before
    the first run exists or the first cent is spent. `shared` comes from
    `memeval_farm.farm.connect`. `cases` holds the plan, not the cases: their bodies are read
    from the suite again as they are sent, a window of them at a time.
    """
    rates = parse_rates(config.rates)
    for engine in dict.fromkeys(p.engine for p in config.profiles):
        check_engine(engine, remote=shared is not None)
    sweep_id = new_run_id()
    scope = f"{SWEEP_SCOPE}{sweep_id}"
    setup = asyncio.run(
        prepare(
            config.models,
            base_url=config.base_url,
            max_tokens=config.max_tokens,
            prices=config.prices,
            rates=config.rates,
            budget_usd=config.budget_usd,
            scope=scope,
        )
    )
    for warning in setup.warnings:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    for row in estimate(
        cases.calls,
        trials=config.trials * len(config.profiles),
        prices={m: s.price for m, s in setup.specs.items()},
        max_tokens=config.max_tokens,
    ):
        console.print(
            f"{row.model}: {row.calls} calls, expected ${row.usd_expected or 0:.4f} "
            f"(at most ${row.usd_max or 0:.4f})",
            highlight=False,
        )
    plan = variants(sweep_id, config.models, config.profiles)
    runs = Interleaved(
        plan=cases.plan,
        trials=config.trials,
        columns=[
            cases.plan.record(
                store,
                run_id=v.run_id,
                label=v.label,
                engine=v.profile.engine,
                suite=config.suite,
                trials=config.trials,
                options=v.profile.options(RunOptions(llm=setup.specs[v.model], rates=rates)),
                budget_micros=usd_to_micros(config.budget_usd),  # the sweep's, for a resume
            )
            for v in plan
        ],
    )
    console.print(
        f"sweep {sweep_id}: {len(plan)} variants, budget ${config.budget_usd:.2f}", highlight=False
    )
    budget_closed: str | None = None

    def open_in(redis_url: str) -> None:
        asyncio.run(open_budget(redis_url, scope, usd_to_micros(config.budget_usd)))

    def read_closed(redis_url: str) -> None:
        nonlocal budget_closed
        budget_closed = asyncio.run(_closed(redis_url, scope))

    started = datetime.now(UTC)
    interrupted = False
    try:
        run_on_farm(
            settings,
            shared,
            store,
            [v.run_id for v in plan],
            runs.outgoing(),
            workers=workers,
            pool=pool,
            console=console,
            verbose=verbose,
            before_dispatch=open_in,
            after_landing=read_closed,
        )
    except KeyboardInterrupt:
        interrupted = True  # the farm has marked every run interrupted and revoked the rest
    reports = [
        finalize(store, v.run_id, RunStatus.interrupted if interrupted else RunStatus.finished)
        for v in plan
    ]
    return sweep_report(
        sweep_id,
        config,
        plan,
        reports,
        cases=len(cases.plan.once),
        started=started,
        interrupted=interrupted,
        budget_closed=budget_closed,
    )


async def _closed(redis_url: str, scope: str) -> str | None:
    """Why the budget stopped paid calls, if it did; read while an embedded Redis still lives."""
    redis = await connect_redis(redis_url)
    try:
        return (await Budget(redis, [scope]).state(scope)).closed
    finally:
        await redis.aclose()
