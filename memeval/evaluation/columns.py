"""Several runs over the same selected cases, sent as one stream: a sweep's variants, each a run
of its own in the store, planned from one pass over the suite and read again as they are sent.

The cases go out case-major, run-minor: every run gets case 1, then every run gets case 2, and
so on. The queue is first in, first out, so any prefix of the stream covers every run equally,
to within one case: when a shared budget runs out mid-sweep, every run has answered the same
cases, and no run is compared on easier cases than another.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from pydantic import BaseModel

from memeval.evaluation.jobs import CaseJob, JobKey, Outgoing, record_run
from memeval.evaluation.selection import Selection
from memeval.runner import RunOptions
from memeval.store import CaseKey, PlannedCase, Store


class Sent(Protocol):
    """A run as its jobs carry it: a `Column`, or a single run's `PlannedRun`."""

    @property
    def run_id(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def options(self) -> RunOptions: ...


def jobs_of(selection: Selection, todo: list[CaseKey], runs: Sequence[Sent]) -> Iterator[CaseJob]:
    """Each case read from the suite once, as it is asked for, then a job of it for every run."""
    for case, trial in selection.find(todo):
        for run in runs:
            yield CaseJob(
                run_id=run.run_id,
                engine=run.engine,
                case=case,
                trial=trial,
                options=run.options,
                label=run.label,
            )


def outgoing_of(selection: Selection, todo: list[CaseKey], runs: Sequence[Sent]) -> Outgoing:
    """The keys of every job in the order `jobs_of` sends them, and the jobs, still unread."""
    keys = [JobKey(run.run_id, key) for key in todo for run in runs]
    return Outgoing(keys, jobs_of(selection, todo, runs), {r.run_id: r.engine for r in runs})


class Column(BaseModel):
    """One run of the stream, as the store recorded it (a taken label gets a suffix)."""

    run_id: str
    label: str
    engine: str
    options: RunOptions


class ColumnPlan(BaseModel):
    """What one pass over a selection leaves: each selected case's plan entry, not the case."""

    selection: Selection
    once: list[PlannedCase]

    def record(
        self,
        store: Store,
        *,
        run_id: str,
        label: str,
        engine: str,
        suite: str,
        trials: int,
        options: RunOptions,
        budget_micros: int | None,
    ) -> Column:
        """Record one run with its whole plan, trial by trial, before any case is sent."""
        record = record_run(
            store,
            run_id=run_id,
            label=label,
            engine=engine,
            suite=suite,
            planned=[p.model_copy(update={"trial": t}) for t in range(trials) for p in self.once],
            options=options,
            budget_micros=budget_micros,
        )
        return Column(run_id=run_id, label=record.label, engine=engine, options=options)


class Interleaved(BaseModel):
    """Recorded runs over the same plan; their cases are read from the suite as they are
    sent, one pass a trial, so the sender holds a window of case bodies, never the suite."""

    plan: ColumnPlan
    trials: int
    columns: list[Column]

    def todo(self) -> list[CaseKey]:
        """Plan order: trial by trial, each trial in suite order."""
        return [CaseKey(p.case_id, t) for t in range(self.trials) for p in self.plan.once]

    def outgoing(self) -> Outgoing:
        return outgoing_of(self.plan.selection, self.todo(), self.columns)

    def jobs(self) -> Iterator[CaseJob]:
        return jobs_of(self.plan.selection, self.todo(), self.columns)
