"""What every surface says beside a run's numbers: which cases they leave out, and what
infrastructure trouble the run met on the way. One wording for the terminal, md and html."""

from __future__ import annotations

from memeval.results import RunReport
from memeval.summary import scope

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


def infra_note(report: RunReport) -> str | None:
    """The infrastructure errors met, which never counted against the engine; None if none."""
    if not report.infra_retries and not report.case_restarts:
        return None
    return (
        f"infrastructure errors met: {_count(report.infra_retries, 'request')} retried, "
        f"{_count(report.case_restarts, 'case')} restarted on a fresh tenant; "
        "none is in the score"
    )


def overbilling_note(report: RunReport) -> str | None:
    """A model service that billed more than the budget held: the cap may not be exact."""
    if not report.overbilled_calls:
        return None
    return (
        f"warning: the model service billed ${report.overbilled_usd_micros / 1e6:.6f} above "
        f"the budget's holds on {_count(report.overbilled_calls, 'call')}, so the budget was "
        "closed; check the model's price (--price MODEL=PROMPT/COMPLETION)"
    )


def models_note(report: RunReport) -> str | None:
    """The models behind the engine's figures (an embedder, a stand-in chat model): a score
    over a hashed or a stand-in model is not one over a real one, and must say which."""
    from memeval.engines.registry import models_of

    models = models_of(report.engine)
    return f"models: {'; '.join(models)}" if models else None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
