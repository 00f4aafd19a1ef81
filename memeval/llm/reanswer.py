"""`memeval answer`: answer and judge a stored run again from the packs it kept.

Ingest is the expensive part of a run against a real engine (some run a model over every
write); the answering model and the judges only read the packs. So a new answering model, new
judges or another judge mode need no engine at all: every probe's pack and every fixture
query's hits are in the store, and this module asks the models about them, grades the answers
against the suite's cases, and writes a new run that names its source (`source_run`).

The new run plans the source's cases; each is written as soon as it is answered, so an
interrupted or budget-stopped answer run is finished by `memeval answer --resume NEW_ID`,
which answers only the cases the new run still lacks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from pydantic import BaseModel

from memeval.bounded import Bounded
from memeval.errors import UsageError
from memeval.llm.answer import Answerer, PaidCalls, answerer_for
from memeval.llm.estimate import PlannedAnswer
from memeval.llm.grading import answerable_probe, answerable_query, probe_question, query_question
from memeval.llm.judge import question_type
from memeval.llm.shared import OpenShared
from memeval.llm.spec import LlmSpec
from memeval.results import CaseResult, CaseStatus, CheckStatus
from memeval.runner.answers import answer_probe, answer_query, finish_answers
from memeval.runner.context import CaseContext, RunOptions
from memeval.scoring.pack import gold_answers
from memeval.store import RunRecord, Store
from memeval.suites.catalog import stream
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario

SOURCE_RUN = "source_run"
"""The key, among an answer run's options, of the run whose packs it answers from."""


class AnswerPlan(BaseModel):
    """An answer run in the store and the source cases it still has to answer."""

    run_id: str
    source: str
    todo: list[CaseResult]
    spec: LlmSpec


def create_answer_run(
    store: Store,
    source: RunRecord,
    spec: LlmSpec,
    *,
    run_id: str,
    label: str | None,
    budget_micros: int | None,
) -> AnswerPlan:
    """Records the new run with the source's plan and engine, before any model is paid."""
    options = RunOptions.model_validate(source.options).model_copy(update={"llm": spec})
    record = store.create_run(
        run_id=run_id,
        label=label or f"{source.label}-answered",
        engine=source.engine,
        suite=source.suite,
        planned=source.planned,
        options=options.model_dump(mode="json")
        | {"budget_micros": budget_micros, SOURCE_RUN: source.id},
        prompt_version=spec.prompt_version,
        subset=source.subset,
        suite_at=source.suite_at,
    )
    return AnswerPlan(run_id=record.id, source=source.id, todo=_todo(store, record), spec=spec)


def reopen_answer_run(store: Store, record: RunRecord) -> AnswerPlan:
    source = record.options.get(SOURCE_RUN)
    if not isinstance(source, str):
        raise UsageError(
            f"run `{record.id}` was not made by `memeval answer`",
            fix=f"resume it with `memeval run --resume {record.id}`",
        )
    spec = RunOptions.model_validate(record.options).llm
    if spec is None:
        raise UsageError(f"answer run `{record.id}` names no model", fix="start a new answer run")
    store.reopen_run(record.id)
    return AnswerPlan(run_id=record.id, source=source, todo=_todo(store, record), spec=spec)


def _todo(store: Store, record: RunRecord) -> list[CaseResult]:
    """The source's results for the cases this run has no done result for."""
    source = record.options[SOURCE_RUN]
    missing = {p.key for p in store.missing_cases(record.id)}
    return [r for r in store.case_results(source) if (r.case_id, r.trial) in missing]


async def answer_run(
    plan: AnswerPlan,
    suite: str,
    *,
    shared: OpenShared,
    ledger: PaidCalls,
    landed: Callable[[CaseResult], object],
    concurrency: int = 4,
) -> None:
    """Answers every case of `plan.todo`, handing each result to `landed` as it is done.

    Grading needs each probe's `match`, `accept` and checks, so the suite is read again: once,
    a case at a time, each case held only while its results are answered (`concurrency` at
    once), so a benchmark file of any size costs the memory of a few of its cases."""
    waiting: dict[str, list[CaseResult]] = defaultdict(list)
    for source in plan.todo:
        waiting[source.case_id].append(source)
    slots = Bounded(concurrency)
    async with answerer_for(plan.spec, shared=shared, ledger=ledger) as answerer:
        assert answerer is not None

        async def one(source: CaseResult, case: Scenario | Fixture | None) -> None:
            landed(await reanswer_case(source, case, plan, answerer))

        for case in stream(suite) if waiting else ():
            for source in waiting.pop(case.id, []):
                await slots.start(one(source, case))
            if not waiting:
                break
        for sources in waiting.values():  # cases the suite no longer holds
            for source in sources:
                await slots.start(one(source, None))
        await slots.finish()


async def reanswer_case(
    source: CaseResult,
    case: Scenario | Fixture | None,
    plan: AnswerPlan,
    answerer: Answerer,
) -> CaseResult:
    """The source's result with the engine's part kept whole (packs, hits, timings, checks)
    and every model answer and verdict made anew. `case`: the suite's case of that id, None
    when the suite no longer holds it."""
    result = source.model_copy(deep=True, update={"run_id": plan.run_id, "answerer_usd_micros": 0})
    if source.status is not CaseStatus.done:
        result.error = f"not done in source run {plan.source}: {source.error or source.status}"
        return result
    if case is None:
        result.status = CaseStatus.error
        result.error = f"the suite no longer holds case {source.case_id}"
        return result
    result.probes = [p.model_copy(update=_FRESH_PROBE) for p in result.probes]
    result.queries = [q.model_copy(update=_FRESH_QUERY) for q in result.queries]
    result.timings = [t for t in result.timings if t.step != ANSWER_STEP]
    async with answerer.for_case(_planned(result, case)) as funded:
        if funded is None:
            result.status = CaseStatus.skipped_budget
            return result
        ctx = CaseContext(result, RunOptions(llm=plan.spec), funded)
        if isinstance(case, Scenario):
            probes = {p.id: p for p in case.probes}
            for probe_result in result.probes:
                probe = probes.get(probe_result.probe)
                if probe is not None and probe_result.status in ASKED:
                    await answer_probe(probe, probe_result, ctx)
        else:
            for log in result.queries:
                if log.query < len(case.queries) and log.pack:
                    await answer_query(case.queries[log.query], log.pack, log, ctx)
    result.timings += ctx.watch.timings
    finish_answers(ctx)
    return result


def _planned(result: CaseResult, case: Scenario | Fixture) -> list[PlannedAnswer]:
    """The calls answering `result` again will make, over the packs it kept: a fund sized
    by the real packs, not a stand-in."""
    if isinstance(case, Fixture):
        return [
            PlannedAnswer(question=query_question(case.queries[log.query]), pack=log.pack)
            for log in result.queries
            if log.query < len(case.queries) and log.pack
            and answerable_query(case.queries[log.query])
        ]  # fmt: skip
    probes = {p.id: p for p in case.probes}
    return [
        PlannedAnswer(
            question=probe_question(probe),
            pack=done.pack,
            gold=gold_answers(probe)[0],
            kind=question_type(probe.tags, abstain=probe.abstain),
        )
        for done in result.probes
        if (probe := probes.get(done.probe)) is not None
        and done.status in ASKED and answerable_probe(probe)
    ]  # fmt: skip


ANSWER_STEP = "answer"
ASKED = (CheckStatus.passed, CheckStatus.failed)
"""Probes whose pack came back: an unsupported or failed call left nothing to answer from."""
_FRESH_PROBE: dict[str, object] = {
    "model_answer": None,
    "model_ok": None,
    "model_f1": None,
    "model_tokens": 0,
    "model_usd_micros": 0,
    "judge_ok": None,
    "judge_note": None,
    "judges": [],
}
"""The source's answers and verdicts, cleared: they must never pass for the new model's."""
_FRESH_QUERY = {"model_answer": None, "model_ok": None, "model_tokens": 0, "model_usd_micros": 0}
