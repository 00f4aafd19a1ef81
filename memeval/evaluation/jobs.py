"""What a `run_case` task message holds, the small reference the task returns, and the run
recorded with its whole plan before any of its messages is sent.

The case travels whole, as validated JSON, so a worker needs no shared filesystem. The engine
travels as a name: a worker builds the engine itself, with keys from its own environment, so
nothing in a message (which Redis and Flower show to anyone who can see them) is a secret.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from functools import cached_property
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from memeval.results import CaseResult, CaseStatus
from memeval.runner import failed_result
from memeval.runner.context import RunOptions
from memeval.secrets import redact
from memeval.store import CaseKey, PlannedCase, RunRecord, Store
from memeval.suites.catalog import anchored
from memeval.suites.fixture import Fixture
from memeval.suites.loader import Case
from memeval.suites.scenario import Scenario


class JobKey(NamedTuple):
    """A case of a run: one chord may carry several runs (a sweep), whose cases share keys."""

    run_id: str
    case: CaseKey


class CaseJob(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    engine: str
    case: Case
    trial: int
    options: RunOptions
    label: str | None = None  # shown in Flower only: the run record holds it for everything else

    @property
    def key(self) -> JobKey:
        return JobKey(self.run_id, CaseKey(self.case.id, self.trial))

    @cached_property
    def body(self) -> str:
        """The case as the message carries it: one JSON string, written once (its length is
        what the broker holds) and read back by the worker in one `validate_json`. As nested
        JSON objects, building and encoding a LongMemEval instance's 480 turns took the
        dispatcher about 6 ms a case, and decoding them as long again on the worker."""
        return self.case.model_dump_json()

    def message(self, epoch: str | None = None) -> dict[str, Any]:
        """Task args and options; `epoch` is the dispatch that sends it (`memeval_farm.fence`).
        The args reprs, which events, logs and Flower's task list show, name the run, its
        label and the case in words (`run=ID label='L' case='C' trial=N`), so a task is
        recognised at a glance and Flower's search finds a run's tasks by id or label; the
        bulky case body is left out of the kwargs repr. Those reprs are what Flower displays,
        so they are masked like any text shown."""
        kwargs = {
            "engine": self.engine,
            "case": self.body,
            "options": self.options.model_dump(mode="json"),
            "epoch": epoch,
        }
        args = (self.run_id, self.case.id, self.trial)
        return {
            "args": args,
            "kwargs": kwargs,
            "argsrepr": redact(self.shown()),
            "kwargsrepr": redact(repr({"engine": self.engine, "options": kwargs["options"]})),
        }

    def shown(self) -> str:
        label = "" if self.label is None else f" label={self.label!r}"
        return f"run={self.run_id}{label} case={self.case.id!r} trial={self.trial}"

    def reference(self) -> dict[str, Any]:
        """What the task returns: the same for every execution, so a redelivery changes nothing."""
        return {"run_id": self.run_id, "case_id": self.case.id, "trial": self.trial}

    def failed(
        self,
        reason: str,
        started_at: datetime,
        status: CaseStatus = CaseStatus.error,
        attempt: int = 0,
    ) -> CaseResult:
        """A result for a case that could not run to the end; resumable, never scored."""
        return failed_result(
            self.case,
            run_id=self.run_id,
            trial=self.trial,
            engine=self.engine,
            reason=reason,
            started_at=started_at,
            status=status,
            attempt=attempt,
        )


class Outgoing(NamedTuple):
    """The cases a dispatch sends: every key known up front (what the dispatcher waits for),
    the bodies an iterable read only as they are sent, and each run's engine (which a fleet
    checks before any case goes out)."""

    keys: list[JobKey]
    jobs: Iterable[CaseJob]
    engines: dict[str, str]
    """run id -> engine, in the order the runs were planned."""

    @classmethod
    def of(cls, jobs: list[CaseJob]) -> Outgoing:
        """Cases already in memory: a benchmark's list."""
        return cls([job.key for job in jobs], jobs, {job.run_id: job.engine for job in jobs})


def planned(case: Scenario | Fixture, trial: int) -> PlannedCase:
    return PlannedCase(
        case_id=case.id,
        trial=trial,
        kind=case.kind,
        dimension=case.dimension.value if isinstance(case, Fixture) else None,
    )


def record_run(
    store: Store,
    *,
    run_id: str,
    label: str,
    engine: str,
    suite: str,
    planned: list[PlannedCase],
    options: RunOptions,
    budget_micros: int | None,
    subset: str | None = None,
) -> RunRecord:
    """The run written with its whole plan before any case is dispatched: a run that exists
    first is one `--resume` can always complete."""
    return store.create_run(
        run_id=run_id,
        label=label,
        engine=engine,
        suite=suite,
        suite_at=anchored(suite),
        planned=planned,
        options=options.model_dump(mode="json") | {"budget_micros": budget_micros},
        prompt_version=options.llm.prompt_version if options.llm else None,
        subset=subset,
    )
