"""`memeval answer`: another answering model, judges or judge mode on a stored run's packs.

The engine is never called: the packs and hits the source run stored are what the models read,
so trying a model costs its calls and nothing of the engine's ingest. The new run names its
source (option `source_run`) and keeps each answered case as it lands, so Ctrl-C or a spent
budget leaves something `--resume` finishes.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.console import Console

from memeval.cli import run_options as opt
from memeval.cli.options import BaseUrl, ModelTimeout, Prices, Rates
from memeval.cli.run_options import ModelFlags
from memeval.cli.summary import print_summary
from memeval.errors import UsageError
from memeval.evaluation.finalize import finalize
from memeval.evaluation.models import (
    ModelPlan,
    paid_so_far,
    plan_models,
)
from memeval.evaluation.outcome import only_budget_stopped, unfinished
from memeval.evaluation.planning import new_run_id, resumed_budget
from memeval.evaluation.store import usable_store
from memeval.llm.answer import PaidCalls
from memeval.llm.judge import JudgeMode
from memeval.llm.reanswer import (
    AnswerPlan,
    answer_run,
    create_answer_run,
    reopen_answer_run,
)
from memeval.report.stored import require_run
from memeval.store import RunStatus, Store
from memeval_farm.redis_state import shared_for_process

out = Console()
BUDGET_REACHED = 5
INTERRUPTED = 130

Source = Annotated[
    str | None,
    typer.Argument(help="The run whose stored packs are answered: its id, label or `latest`."),
]
Judges = Annotated[
    list[str] | None,
    typer.Option(
        "--judge",
        help="A model that grades every answer against the gold one, on the same budget; "
        "repeat for a majority of judges.",
        metavar="MODEL",
    ),
]
Resume = Annotated[
    str | None,
    typer.Option(help="Finish an answer run that stopped (Ctrl-C, budget).", metavar="RUN_ID"),
]


class AnswerFlags(ModelFlags):
    source: str | None
    resume: str | None
    label: str | None


def answer_command(
    ctx: typer.Context,
    source: Source = None,
    resume: Resume = None,
    model: opt.Model = None,
    judge: Judges = None,
    judge_mode: opt.JudgeModeOption = JudgeMode.strict,
    base_url: BaseUrl = None,
    max_tokens: opt.MaxTokens = None,
    budget_usd: opt.BudgetUsd = None,
    price: Prices = None,
    rate: Rates = None,
    model_timeout: ModelTimeout = None,
    label: opt.Label = None,
    out_dir: opt.OutDir = None,
    json_path: opt.JsonPath = None,
    md_path: opt.MdPath = None,
) -> None:
    """Answer and judge a stored run again from its packs, without calling its engine.

    Writes a new run linked to its source. Exit codes: 0 every case answered, 1 some case
    did not finish, 2 bad input, 5 the budget was reached (`--resume NEW_ID --budget-usd
    LARGER` answers the rest), 130 interrupted.
    """
    flags = AnswerFlags.model_validate(ctx.params)
    store = usable_store()
    plan, models = _plan(flags, store)
    suite = require_run(store, plan.source).suite_at
    shared = shared_for_process()
    opener = models.shared_opener(out)
    if opener is not None:
        opener(shared)
    out.print(f"answering {len(plan.todo)} cases of {plan.source} as run {plan.run_id}")
    try:
        asyncio.run(
            answer_run(
                plan,
                suite,
                shared=shared,
                ledger=PaidCalls(plan.run_id, store.record_paid_call),
                landed=store.upsert_case_result,
            )
        )
    except KeyboardInterrupt:
        _close(store, plan, flags, RunStatus.interrupted)
        out.print(f"[yellow]interrupted[/]: finish with `memeval answer --resume {plan.run_id}`")
        raise typer.Exit(INTERRUPTED) from None
    _close(store, plan, flags, RunStatus.finished)


def _plan(flags: AnswerFlags, store: Store) -> tuple[AnswerPlan, ModelPlan]:
    if flags.resume is None:
        if flags.source is None:
            raise UsageError("name the run to answer", fix="memeval answer RUN_ID --model M")
        source = store.resolve_run(flags.source).record
        run_id = new_run_id()
        models = plan_models(run_id, flags.models(), out)
        assert models.llm is not None
        plan = create_answer_run(
            store,
            source,
            models.llm,
            run_id=run_id,
            label=flags.label,
            budget_micros=models.budget_micros,
        )
        return plan, models
    if flags.source is not None or flags.model is not None or flags.judge or flags.label:
        raise UsageError(
            "--resume answers the rest of the answer run it names, with that run's models",
            fix="drop RUN_ID, --model, --judge and --label",
        )
    record = require_run(store, flags.resume)
    cap = resumed_budget(store, record, flags.budget_usd)
    plan = reopen_answer_run(store, record)
    models = ModelPlan(
        llm=plan.spec,
        rates=plan.spec.rates,
        budget_micros=cap,
        spent_micros=paid_so_far(store, record.id, plan.spec.budget_scopes),
        raise_cap=flags.budget_usd is not None,
    )
    return plan, models


def _close(store: Store, plan: AnswerPlan, flags: AnswerFlags, status: RunStatus) -> None:
    report = finalize(store, plan.run_id, status)
    record = require_run(store, plan.run_id)
    flags.outputs().write(report, record.label, out)
    print_summary(report, out)
    out.print(f"answered from {plan.source} without calling its engine: run {plan.run_id}")
    if status is RunStatus.interrupted:
        return
    left = unfinished(report)
    if left and only_budget_stopped(report):
        out.print(
            f"[yellow]budget reached[/]: `memeval answer --resume {plan.run_id} "
            "--budget-usd LARGER` answers the rest",
            highlight=False,
        )
        raise typer.Exit(BUDGET_REACHED)
    if left:
        out.print(
            f"[yellow]{left} cases did not finish[/]: `memeval answer --resume {plan.run_id}`"
        )
        raise typer.Exit(1)
