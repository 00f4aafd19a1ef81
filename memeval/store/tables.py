"""The schema. The whole `CaseResult` lives in `case_results.payload`; the other columns and the
probe/check tables are projections of it, written in the same transaction, so SQL can answer
"hit rate per probe across engines" without reparsing JSON, while the payload keeps the exact
model round-trip and tolerates new fields in `memeval.results` without a migration.

Statuses are plain strings, not database enums, so adding a status never needs an ALTER TYPE.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    Dialect,
    ForeignKeyConstraint,
    Index,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

from memeval.store.listing import as_utc


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on both dialects; SQLite would otherwise hand back naive values.

    A naive value coming in is taken to be UTC already, which is what `datetime.now(UTC)`
    loses when someone forgets the argument.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return as_utc(value)


def utcnow() -> datetime:
    return datetime.now(UTC)


class RunRow(SQLModel, table=True):
    __tablename__ = "runs"
    __table_args__ = (Index("ix_runs_created_at", "created_at"),)

    id: str = Field(primary_key=True, sa_type=String(200))
    label: str
    engine: str
    suite: str
    status: str = Field(sa_type=String(32))
    options: dict[str, Any] = Field(sa_type=JSON)
    prompt_version: str | None = None
    created_at: datetime = Field(sa_type=UtcDateTime)
    finished_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    planned_count: int
    planned: list[dict[str, Any]] = Field(sa_type=JSON)


_CASE_KEY = ("run_id", "case_id", "trial")


def _case_fk() -> ForeignKeyConstraint:
    """Children point at their case by its natural key, so they can be queried without a join."""
    return ForeignKeyConstraint(
        list(_CASE_KEY), [f"case_results.{c}" for c in _CASE_KEY], ondelete="CASCADE"
    )


class CaseRow(SQLModel, table=True):
    __tablename__ = "case_results"
    __table_args__ = (
        UniqueConstraint(*_CASE_KEY, name="uq_case_results_key"),
        Index("ix_case_results_run_status", "run_id", "status"),
    )

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(foreign_key="runs.id", ondelete="CASCADE", sa_type=String(200))
    case_id: str
    trial: int
    kind: str
    dimension: str | None = None
    status: str = Field(sa_type=String(32))
    score: float | None = None
    engine: str
    tenant: str
    error: str | None = Field(default=None, sa_type=Text)
    engine_usd_micros: int = 0
    answerer_usd_micros: int = 0
    started_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    finished_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    duration_ms: float | None = None
    payload: dict[str, Any] = Field(sa_type=JSON)
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)


class ProbeRow(SQLModel, table=True):
    __tablename__ = "probe_results"
    __table_args__ = (
        _case_fk(),
        UniqueConstraint(*_CASE_KEY, "seq", name="uq_probe_results_key"),
    )

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(sa_type=String(200))
    case_id: str
    trial: int
    seq: int  # position in CaseResult.probes; probe names are only unique by convention
    probe: str
    phase: str = Field(sa_type=String(32))
    via: str
    style: str
    scored: bool
    status: str = Field(sa_type=String(32))
    hit: bool
    rank: int | None = None
    fresh_first: bool | None = None
    stale_first: bool | None = None
    leaks: int
    pack_tokens: int
    extractive_ok: bool
    model_ok: bool | None = None
    captured: bool | None = None


class CheckRow(SQLModel, table=True):
    __tablename__ = "check_results"
    __table_args__ = (
        _case_fk(),
        UniqueConstraint(*_CASE_KEY, "seq", name="uq_check_results_key"),
    )

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(sa_type=String(200))
    case_id: str
    trial: int
    seq: int
    query: int
    kind: str
    value: str = Field(sa_type=Text)
    status: str = Field(sa_type=String(32))


class PaidCallRow(SQLModel, table=True):
    """One paid model call, written before it is sent and corrected once its bill is known.

    A case result holds only its latest attempt's spend, and a case cut short holds none, so a
    run's spend is the sum of these rows: it survives every overwrite and every crash mid-call.
    No foreign key: the row must land even while its case has no result yet.
    """

    __tablename__ = "paid_calls"
    __table_args__ = (Index("ix_paid_calls_run", "run_id"),)

    call_id: str = Field(primary_key=True, sa_type=String(64))
    run_id: str = Field(sa_type=String(200))
    model: str
    state: str = Field(sa_type=String(32))
    held_micros: int
    charged_micros: int  # what counts against the budget: the hold until the bill is known
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)


TABLES = [
    SQLModel.metadata.tables[row.__tablename__]
    for row in (RunRow, CaseRow, ProbeRow, CheckRow, PaidCallRow)
]
