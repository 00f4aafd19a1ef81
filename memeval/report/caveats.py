"""What every surface says beside a run's numbers: which cases they leave out, and what
infrastructure trouble the run met on the way. One wording for the terminal, md and html."""

from __future__ import annotations

from memeval.models import CHAT_MODEL, NOTE
from memeval.results import CaseStatus, RunReport
from memeval.summary import plural, scope

SHOWN = 10
"""Unscored cases named in a one-line note; the JSON report and md list every one."""


def planned(report: RunReport) -> int:
    return len(report.cases) + len(report.missing)


def composite_title(report: RunReport) -> str:
    """ "composite", or "composite (temporal only)" for a run of part of its suite, and
    "(..., partial)" when planned cases are missing from it: a score over one dimension is
    that dimension's, and must not read as the whole suite's."""
    subset = scope(report.subset, (c.dimension for c in report.cases if c.kind == "fixture"))
    marks = [m for m in (subset, "partial" if report.partial else None) if m]
    return f"composite ({', '.join(marks)})" if marks else "composite"


def partial_note(report: RunReport, *, every: bool = False) -> str | None:
    """E.g. "partial: 2 of 62 planned cases are not in the score: a#0 (lost), b#0 (error)"."""
    if not report.partial:
        return None
    names = report.unscored if every else report.unscored[:SHOWN]
    more = len(report.unscored) - len(names)
    listed = ", ".join(names) + (f" and {more} more" if more else "")
    return (
        f"partial: {len(report.unscored)} of {planned(report)} planned cases are not in the "
        f"score: {listed}"
    )


def models_note(report: RunReport) -> str | None:
    """Which model answered, under which prompt (and which judged), in every report of an
    `--llm` run; with the stand-in chat model, that its answers measure the pack, not a model."""
    if report.answerer is None:
        return None
    used = [f"answers by {report.answerer.model} (prompt {report.answerer.prompt_version})"]
    if report.judge is not None:
        used.append(f"graded by {report.judge.model} (prompt {report.judge.prompt_version})")
    note = "; ".join(used)
    stand_in = {CHAT_MODEL} & {report.answerer.model, report.judge and report.judge.model}
    if stand_in:
        note += (
            f"; caveat: {CHAT_MODEL} answers with the pack line nearest the question, as the "
            f"extractive answer does, so model_answer measures the pack, not a model ({NOTE})"
        )
    return note


def engine_models_note(report: RunReport) -> str | None:
    """The models behind the engine's figures (an embedder, a stand-in chat model): a score
    over a hashed or a stand-in model is not one over a real one, and must say which."""
    from memeval.engines.registry import models_of

    models = models_of(report.engine)
    return f"engine models: {'; '.join(models)}" if models else None


def infra_note(report: RunReport) -> str | None:
    """The infrastructure errors met, which never counted against the engine; None if none."""
    if not report.infra_retries and not report.case_restarts:
        return None
    return (
        f"infrastructure errors met: {plural(report.infra_retries, 'request')} retried, "
        f"{plural(report.case_restarts, 'case')} restarted on a fresh tenant; "
        "none is in the score"
    )


def spend_note(report: RunReport) -> str | None:
    """How much of the answering model's spend bought answers that reached a score, whenever
    some of it did not or the budget skipped cases; None otherwise. Cases hold their whole
    spend before they start, so a budget that runs out should leave this at 100%."""
    total = sum(c.answerer_usd_micros for c in report.cases)
    lost = sum(c.answerer_usd_micros for c in report.cases if c.status is not CaseStatus.done)
    skipped = any(c.status is CaseStatus.skipped_budget for c in report.cases)
    if not total or not (lost or skipped):
        return None
    note = f"model spend: {100 * (total - lost) / total:.1f}% of ${total / 1e6:.4f} reached a score"
    return f"{note}; ${lost / 1e6:.4f} bought answers for cases not in it" if lost else note


def overbilling_note(report: RunReport) -> str | None:
    """A model service that billed more than the budget held: the cap may not be exact."""
    if not report.overbilled_calls:
        return None
    return (
        f"warning: the model service billed ${report.overbilled_usd_micros / 1e6:.6f} above "
        f"the budget's holds on {plural(report.overbilled_calls, 'call')}, so the budget was "
        "closed; check the model's price (--price MODEL=PROMPT/COMPLETION)"
    )
