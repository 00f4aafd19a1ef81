"""Model answers inside a case, when the run has an answerer; without one nothing here runs.

The first reply that is skipped for budget or fails ends the case's model calls: a case is
either fully answered or marked (`skipped_budget`, or `error` to be resumed), so comparisons
only ever use complete answer sets, and no money goes on a case that will not count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memeval.llm.grading import (
    answerable_probe,
    answerable_query,
    grade_query,
    probe_question,
    query_question,
)
from memeval.llm.judging import apply, judge_probe
from memeval.results import CaseStatus, ProbeResult, QueryLog
from memeval.runner.context import CaseContext
from memeval.scoring.pack import gold_answers, grade_answer, token_f1
from memeval.suites.fixture import Query
from memeval.suites.scenario import Probe

if TYPE_CHECKING:
    from memeval.llm.answer import AnswerResult


async def answer_probe(probe: Probe, result: ProbeResult, ctx: CaseContext) -> None:
    if not answerable_probe(probe):
        return
    reply = await _ask(probe_question(probe), result.pack, ctx)
    if reply is not None:
        result.model_answer = reply.text
        result.model_ok = grade_answer(reply.text, probe)
        result.model_f1 = token_f1(reply.text, gold_answers(probe))
        result.model_tokens = reply.tokens
        result.model_usd_micros = reply.usd_micros
        await _judge(probe, result, ctx)


async def _judge(probe: Probe, result: ProbeResult, ctx: CaseContext) -> None:
    """`--judge`: other models grade the answer against the gold one, on the same budget;
    a verdict one cannot give stops the case's model calls like a failed answer does."""
    answerer = ctx.answerer
    if answerer is None or not answerer.judges or ctx.answers_stopped is not None:
        return
    step, ctx.watch.step = ctx.watch.step, "answer"
    try:
        judged = await ctx.watch.time(
            "judge",
            judge_probe(answerer.judges, result, gold_answers(probe)[0], answerer.spec.judge_mode),
        )
    finally:
        ctx.watch.step = step
    ctx.result.answerer_usd_micros += judged.usd_micros
    if judged.stopped is not None:
        ctx.answers_stopped = judged.stopped
        return
    apply(judged, result)


async def answer_query(query: Query, pack: str, log: QueryLog, ctx: CaseContext) -> None:
    """`pack`: the hits as a model is shown them (`hits_pack`), kept on the log."""
    if not answerable_query(query):
        return
    log.pack = pack
    reply = await _ask(query_question(query), pack, ctx)
    if reply is not None:
        log.model_answer = reply.text
        log.model_ok = grade_query(reply.text, query)
        log.model_tokens = reply.tokens
        log.model_usd_micros = reply.usd_micros


async def _ask(question: str, pack: str, ctx: CaseContext) -> AnswerResult | None:
    if ctx.answerer is None or ctx.answers_stopped is not None:
        return None
    step, ctx.watch.step = ctx.watch.step, "answer"  # kept out of the memory's latency KPIs
    try:
        reply = await ctx.watch.time("answer", ctx.answerer.answer(question, pack))
    finally:
        ctx.watch.step = step
    ctx.result.answerer_usd_micros += reply.usd_micros
    if reply.skipped_budget or reply.error is not None:
        ctx.answers_stopped = reply
        return None
    return reply


def finish_answers(ctx: CaseContext) -> None:
    stopped = ctx.answers_stopped
    if stopped is None or ctx.result.status is not CaseStatus.done:
        return
    if stopped.skipped_budget:
        ctx.result.status = CaseStatus.skipped_budget
    else:
        ctx.result.status = CaseStatus.error
        ctx.result.error = f"answerer: {stopped.error}"
