"""A run's report folded from the store: its record, its case results, its planned cases.

The store is the source of truth, never a chord's arguments, so every report of a stored run
(the farm's callback, `memeval report RUN_ID`, a resume) is this same fold.
"""

from __future__ import annotations

from memeval.errors import UnknownRun
from memeval.results import ModelUsed, RunReport
from memeval.store import CaseKey, RunRecord, Store
from memeval.summary import build_report


def ref_key(key: CaseKey) -> str:
    """The `case#trial` form reports use for a case key."""
    return f"{key.case_id}#{key.trial}"


def require_run(store: Store, run_id: str) -> RunRecord:
    record = store.get_run(run_id)
    if record is None:
        raise UnknownRun(run_id)
    return record


def fold_run(store: Store, run_id: str) -> RunReport:
    return fold(store, require_run(store, run_id))


def fold(store: Store, record: RunRecord) -> RunReport:
    report = build_report(
        run_id=record.id,
        label=record.label,
        engine=record.engine,
        suite=record.suite,
        subset=record.subset,
        started_at=record.created_at,
        finished_at=record.finished_at,
        cases=store.case_results(record.id),
        planned=[ref_key(p.key) for p in record.planned],
    )
    report.overbilled_calls, report.overbilled_usd_micros = store.overbilling(record.id)
    report.answerer, report.judge = models_used(record.options.get("llm"))
    return report


def models_used(llm: object) -> tuple[ModelUsed | None, ModelUsed | None]:
    """The answering model and the judge a run stored in its options (`RunOptions.llm`)."""
    if not isinstance(llm, dict) or not llm.get("model"):
        return None, None
    judge = llm.get("judge")
    return (
        ModelUsed(model=llm["model"], prompt_version=llm.get("prompt_version") or "?"),
        ModelUsed(model=judge["model"], prompt_version=judge.get("prompt_version") or "?")
        if isinstance(judge, dict) and judge.get("model")
        else None,
    )
