"""The store's operations. Every write is one short transaction, so a worker killed mid-case
leaves either its whole result or nothing, and a redelivered task overwrites rather than adds.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from itertools import count
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from sqlalchemy import (
    Delete,
    Engine,
    Insert,
    Table,
    Text,
    bindparam,
    cast,
    delete,
    func,
    or_,
)
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import URL
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, SQLModel, col, select

from memeval.errors import UnknownRun, UsageError
from memeval.results import CaseResult, CaseStatus
from memeval.secrets import redact_model, scrub_secrets
from memeval.store.convert import case_values, check_values, probe_values, run_record
from memeval.store.engine import WRITE, create_schema, make_engine
from memeval.store.listing import Listing, listing, newest_runs
from memeval.store.models import (
    SUBSET,
    SUITE_AT,
    CaseKey,
    Overbilling,
    PaidCall,
    PlannedCase,
    RunMatch,
    RunRecord,
    RunStatus,
)
from memeval.store.settings import database_url
from memeval.store.tables import CaseRow, CheckRow, PaidCallRow, ProbeRow, RunRow, utcnow

if TYPE_CHECKING:  # imported where used: a SQLite store (`memeval runs`) never loads it
    from sqlalchemy.dialects import postgresql

LATEST = "latest"
"""The reference `report`, `status` and `compare` take for the newest run in the store."""
_LABEL_LOCK = 0x6D656D6C6162  # "memlab": serialises label claims across Postgres clients
LOST_REASON = "the worker stopped before it reported a result"
_CASE_KEY = ("run_id", "case_id", "trial")
_DONE = CaseStatus.done.value


def new_run_id() -> str:
    """Sortable by start time at a glance, and unique without coordination between machines."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


# Core statements, built once and run with parameters: building them per call (and going
# through the ORM) cost more than running them, and a case's write holds the database lock.
_RUNS, _CASES = RunRow.__table__, CaseRow.__table__  # type: ignore[attr-defined]
_RUN_STATUS = select(_RUNS.c.status).where(_RUNS.c.id == bindparam("run_id"))
_PROBES, _CHECKS = ProbeRow.__table__, CheckRow.__table__  # type: ignore[attr-defined]


@cache
def _upsert_case(dialect: str) -> Insert:
    """Insert a case row, or update it unless that would replace a done result by another."""
    from sqlalchemy.dialects import postgresql

    stmt = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(_CASES)
    kept = (*_CASE_KEY, "id", "created_at")
    return stmt.on_conflict_do_update(
        index_elements=list(_CASE_KEY),
        set_={c.name: stmt.excluded[c.name] for c in _CASES.columns if c.name not in kept},
        where=or_(_CASES.c.status != _DONE, stmt.excluded.status == _DONE),
    ).returning(_CASES.c.created_at)


@cache
def _delete_children(table: Table) -> Delete:
    return delete(table).where(*(table.c[name] == bindparam(name) for name in _CASE_KEY))


def _insert(session: Session, table: type[SQLModel]) -> postgresql.Insert | sqlite.Insert:
    """The dialect's own INSERT, the one that knows ON CONFLICT (same API on both)."""
    from sqlalchemy.dialects import postgresql

    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


# Engines a forked child inherited from its parent. They stay referenced for the child's whole
# life: closing them, or letting garbage collection do it, would end the parent's Postgres
# sessions (libpq says goodbye on the shared socket) or touch its SQLite locks.
_INHERITED: list[Engine] = []

# One lock for every store's first connection in this process. A child forked while another
# thread held it would inherit it held for good, so each child starts with a fresh one.
_FIRST_USE = threading.Lock()


def _fresh_lock() -> None:
    global _FIRST_USE
    _FIRST_USE = threading.Lock()


os.register_at_fork(after_in_child=_fresh_lock)


class Store:
    """A handle that is safe to build in a parent and use in forked children.

    Nothing connects until first use, and the engine is keyed by process id: a child that
    inherits a parent's engine sets it aside, never using or closing it, and builds its own,
    so no socket or SQLite handle is ever shared across a fork.
    """

    def __init__(self, url: URL) -> None:
        self.url = url
        self._engine: Engine | None = None
        self._pid: int | None = None

    @property
    def engine(self) -> Engine:
        """This process's engine, with the schema ensured; also for ad-hoc SQL in reports."""
        pid = os.getpid()
        if self._engine is not None and self._pid == pid:
            return self._engine
        # A thread pool's first cases all arrive here at once: unlocked, each built an engine
        # and checked the schema under PostgreSQL's advisory lock, one after another (27 for 4
        # workers of 16 threads, and the run's first cases waited up to 0.9 s for them).
        with _FIRST_USE:
            if self._engine is None or self._pid != pid:
                self.dispose()
                engine = make_engine(self.url)
                create_schema(engine)
                self._engine, self._pid = engine, pid
            return self._engine

    def dispose(self) -> None:
        """Close this process's connections; the next call reconnects.

        Forking needs no call (the pid check covers it); call it at shutdown, e.g. from Celery's
        `worker_process_shutdown`, so Postgres sees clean goodbyes. An engine inherited from a
        parent is only set aside, since closing it would close the parent's connections.
        """
        if self._engine is not None:
            if self._pid == os.getpid():
                self._engine.dispose()
            else:
                _INHERITED.append(self._engine)
        self._engine, self._pid = None, None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.dispose()

    @contextmanager
    def _read(self) -> Iterator[Session]:
        with Session(self.engine) as session:
            yield session

    @contextmanager
    def _write(self) -> Iterator[Session]:
        engine = self.engine.execution_options(**WRITE)
        with Session(engine, expire_on_commit=False) as session, session.begin():
            yield session

    # ---- runs ----------------------------------------------------------------------------

    def create_run(
        self,
        *,
        label: str,
        engine: str,
        suite: str,
        planned: Sequence[PlannedCase],
        options: Mapping[str, Any] | None = None,
        prompt_version: str | None = None,
        run_id: str | None = None,
        subset: str | None = None,
        suite_at: str | None = None,
    ) -> RunRecord:
        """Record a run and its plan before any case is dispatched, so resume knows the whole.

        The label is claimed here, in the transaction that writes the run: a label another run
        holds gets the first free suffix (`nightly` -> `nightly-2`), so re-running with the
        same `--label` in a CI loop keeps every run's reports. The record returned holds the
        label used. `subset` names what part of the suite was planned ("temporal only");
        `suite_at` is the suite as found from any folder, kept when it differs from `suite`.
        """
        keys = [p.key for p in planned]
        if len(set(keys)) != len(keys):
            raise ValueError("the plan lists some case/trial more than once")
        given = scrub_secrets(options or {})
        if subset:
            given |= {SUBSET: subset}
        if suite_at and suite_at != suite:
            given |= {SUITE_AT: suite_at}
        row = RunRow(
            id=run_id or new_run_id(),
            label=label,
            engine=engine,
            suite=suite,
            status=RunStatus.running.value,
            options=given,
            prompt_version=prompt_version,
            created_at=utcnow(),
            planned_count=len(planned),
            planned=[p.model_dump(mode="json") for p in planned],
        )
        try:
            with self._write() as session:
                row.label = self._free_label(session, label)
                session.add(row)
        except IntegrityError as exc:
            raise UsageError(
                f"a run `{row.id}` already exists", fix="pick another run id, or resume that run"
            ) from exc
        return run_record(row, {})

    @staticmethod
    def _free_label(session: Session, label: str) -> str:
        """`label`, or `label-N` with the smallest N from 2 that no run holds. On Postgres an
        advisory lock serialises claims; SQLite's write transaction already does."""
        if session.get_bind().dialect.name == "postgresql":
            session.execute(select(func.pg_advisory_xact_lock(_LABEL_LOCK)))
        taken = set(
            session.exec(
                select(RunRow.label).where(
                    or_(
                        col(RunRow.label) == label,
                        col(RunRow.label).startswith(f"{label}-", autoescape=True),
                    )
                )
            ).all()
        )
        if label not in taken:
            return label
        return next(f"{label}-{n}" for n in count(2) if f"{label}-{n}" not in taken)

    def resolve_run(self, ref: str) -> RunMatch:
        """The run `ref` names: a run id, `latest` (the newest run), or a label.

        A label held by several runs (stores written before labels were claimed, or runs
        labelled by hand) names the newest of them; the others come back as `shadowed`, so
        the caller can say which run it picked. Raises UnknownRun when nothing matches.
        """
        with self._read() as session:
            row = session.get(RunRow, ref)
            newest = col(RunRow.created_at).desc(), col(RunRow.id).desc()
            if row is None and ref == LATEST:
                row = session.exec(select(RunRow).order_by(*newest).limit(1)).first()
            rows = [row] if row is not None else []
            if not rows:
                rows = list(
                    session.exec(select(RunRow).where(RunRow.label == ref).order_by(*newest))
                )
            if not rows:
                raise UnknownRun(ref)
            first = rows[0]
            record = run_record(first, self._counts(session, [first.id])[first.id])
            return RunMatch(record, [r.id for r in rows[1:]])

    def finish_run(self, run_id: str, status: RunStatus = RunStatus.finished) -> RunRecord:
        if status is RunStatus.running:
            raise ValueError("finish_run takes a final status; use reopen_run to resume")
        return self._set_status(run_id, status, utcnow())

    def update_run_options(self, run_id: str, changes: Mapping[str, Any]) -> None:
        """Change some of a run's stored options, e.g. the budget a resume was given."""
        with self._write() as session:
            row = self._require_run(session, run_id)
            row.options = {**row.options, **scrub_secrets(dict(changes))}
            session.add(row)

    def reopen_run(self, run_id: str) -> RunRecord:
        """Mark a run running again before its missing cases are re-dispatched."""
        return self._set_status(run_id, RunStatus.running, None)

    def _set_status(
        self, run_id: str, status: RunStatus, finished_at: datetime | None
    ) -> RunRecord:
        with self._write() as session:
            row = self._require_run(session, run_id)
            row.status = status.value
            row.finished_at = finished_at
            session.add(row)
            session.flush()
            return run_record(row, self._counts(session, [run_id])[run_id])

    def get_run(self, run_id: str) -> RunRecord | None:
        with self._read() as session:
            row = session.get(RunRow, run_id)
            return None if row is None else run_record(row, self._counts(session, [run_id])[run_id])

    def list_runs(self, limit: int = 20) -> list[RunRecord]:
        """Newest first."""
        with self._read() as session:
            return newest_runs(session.connection().connection, limit)

    def runs_listing(self, limit: int = 20) -> Listing:
        """Newest first, with their scores and the number of runs in all (`memeval runs`)."""
        with self._read() as session:
            return listing(session.connection().connection, limit)

    def run_status(self, run_id: str) -> RunStatus | None:
        """The status alone, for a check on every task: `get_run` also parses the whole plan
        and counts every result, which made each case cost more the bigger its run."""
        with self.engine.connect() as connection:
            status = connection.execute(_RUN_STATUS, {"run_id": run_id}).scalar()
            return None if status is None else RunStatus(status)

    @staticmethod
    def _require_run(session: Session, run_id: str) -> RunRow:
        row = session.get(RunRow, run_id)
        if row is None:
            raise UnknownRun(run_id)
        return row

    @staticmethod
    def _counts(session: Session, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = defaultdict(dict)
        rows = session.exec(
            select(CaseRow.run_id, CaseRow.status, func.count())
            .where(col(CaseRow.run_id).in_(run_ids))
            .group_by(col(CaseRow.run_id), col(CaseRow.status))
        )
        for run_id, status, n in rows:
            counts[run_id][status] = n
        return counts

    # ---- case results --------------------------------------------------------------------

    def upsert_case_result(self, result: CaseResult) -> bool:
        """Store one case's result under (run, case, trial), replacing any earlier one.

        A done result is never replaced by a non-done one: a task redelivered after it had
        already succeeded may hit a flaky engine the second time, and must not erase the
        answer. Returns whether this result was stored. Secrets are masked first: an error
        or a pack may quote what a service echoed back, key included.
        """
        result = redact_model(result)
        values = case_values(result, utcnow())
        key = {name: values[name] for name in _CASE_KEY}
        engine = self.engine
        with engine.execution_options(**WRITE).begin() as connection:
            try:
                stored = connection.execute(_upsert_case(engine.dialect.name), values).first()
            except IntegrityError as exc:  # the foreign key to `runs`: cheaper than a read first
                raise UnknownRun(result.run_id) from exc
            if stored is None:
                return False
            # A row created by this very call has no children yet; a replaced one has its
            # children replaced wholesale, under the lock the upsert above holds on its row.
            replaced = stored.created_at != values["created_at"]
            for table, rows in ((_PROBES, probe_values(result)), (_CHECKS, check_values(result))):
                if replaced:
                    connection.execute(_delete_children(table), key)
                if rows:
                    connection.execute(table.insert(), rows)
            return True

    def case_results(self, run_id: str) -> list[CaseResult]:
        """The payloads as their stored JSON text, parsed once by pydantic: decoding them to
        dicts in the driver first and validating those cost three times as much, and was most
        of what folding a large run took."""
        with self._read() as session:
            self._require_run(session, run_id)
            payloads = session.exec(
                select(cast(CaseRow.payload, Text))
                .where(CaseRow.run_id == run_id)
                .order_by(col(CaseRow.case_id), col(CaseRow.trial))
            ).all()
            return [CaseResult.model_validate_json(p) for p in payloads]

    def missing_cases(self, run_id: str) -> list[PlannedCase]:
        """Planned cases without a done result, in plan order: what a resume must dispatch.

        Error, lost and budget-skipped cases count as missing; all of them can succeed later.
        """
        with self._read() as session:
            run = self._require_run(session, run_id)
            done = {
                CaseKey(case_id, trial)
                for case_id, trial in session.exec(
                    select(CaseRow.case_id, CaseRow.trial).where(
                        CaseRow.run_id == run_id, CaseRow.status == _DONE
                    )
                )
            }
            planned = [PlannedCase.model_validate(p) for p in run.planned]
            return [p for p in planned if p.key not in done]

    def mark_lost(
        self, run_id: str, keys: Iterable[CaseKey], reason: str = LOST_REASON
    ) -> list[CaseKey]:
        """Record planned cases the watchdog gave up on as lost; returns those newly marked.

        Only silence is filled: a case that has any result keeps it, because a slow worker's
        real answer is worth more than the watchdog's guess, and a late result still replaces
        the lost marker through `upsert_case_result`.
        """
        wanted = [CaseKey(*key) for key in keys]
        with self._write() as session:
            run = self._require_run(session, run_id)
            planned = {p.key: p for p in map(PlannedCase.model_validate, run.planned)}
            unplanned = [key for key in wanted if key not in planned]
            if unplanned:
                raise ValueError(f"not in the plan of run `{run_id}`: {unplanned}")
            marked = []
            now = utcnow()
            for key in wanted:
                case = planned[key]
                lost = CaseResult(
                    run_id=run_id,
                    case_id=case.case_id,
                    trial=case.trial,
                    kind=case.kind,
                    dimension=case.dimension,
                    engine=run.engine,
                    tenant="",
                    status=CaseStatus.lost,
                    error=reason,
                )
                stmt = (
                    _insert(session, CaseRow)
                    .values(case_values(lost, now))
                    .on_conflict_do_nothing(index_elements=list(_CASE_KEY))
                    .returning(col(CaseRow.id))
                )
                if session.execute(stmt).first() is not None:
                    marked.append(key)
            return marked

    # ---- paid model calls ----------------------------------------------------------------

    def record_paid_call(self, call: PaidCall) -> None:
        """Write or correct one paid call, keyed by its id, so writing it again changes nothing."""
        now = utcnow()
        values = call.model_dump(mode="json") | {"created_at": now, "updated_at": now}
        with self._write() as session:
            stmt = _insert(session, PaidCallRow).values(values)
            kept = ("call_id", "run_id", "created_at")
            session.execute(
                stmt.on_conflict_do_update(
                    index_elements=["call_id"],
                    set_={k: stmt.excluded[k] for k in values if k not in kept},
                )
            )

    def paid_micros(self, run_ids: Sequence[str]) -> int:
        """What these runs' paid calls count against a budget: bills where known, holds where
        the bill never came."""
        with self._read() as session:
            total = session.exec(
                select(func.coalesce(func.sum(PaidCallRow.charged_micros), 0)).where(
                    col(PaidCallRow.run_id).in_(run_ids)
                )
            ).one()
            return int(total)

    def overbilling(self, run_id: str) -> Overbilling:
        """The run's calls billed above their holds, and by how much in all."""
        excess = PaidCallRow.charged_micros - PaidCallRow.held_micros
        with self._read() as session:
            calls, micros = session.exec(
                select(func.count(), func.coalesce(func.sum(excess), 0)).where(
                    PaidCallRow.run_id == run_id, excess > 0
                )
            ).one()
            return Overbilling(int(calls), int(micros))


def open_store(url: str | None = None) -> Store:
    """The store at `url`, else `MEMEVAL_DATABASE_URL`, else `./memeval-runs/memeval.db`.

    Cheap and connection-free, so it can run at import time in a Celery app module.
    """
    return Store(database_url(url))
