"""The newest runs with their case counts, in plain SQL on a DB-API connection.

`Store.list_runs` runs it on its engine's connection; `memeval runs` runs it on a sqlite3
connection of its own, so listing a local store never imports SQLAlchemy, which was most of
that command's time. Values come back raw from either driver (JSON as text from SQLite,
datetimes naive from SQLite, parsed and aware from psycopg) and are read the same way here.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, overload

from pydantic import BaseModel, Field

from memeval.results import CaseStatus
from memeval.store.models import PlannedCase, RunRecord, RunStatus

DEFAULT_PATH = Path("memeval-runs") / "memeval.db"
URL_ENV = "MEMEVAL_DATABASE_URL"
_SQLITE = "sqlite:///"
COLUMNS = (
    "id", "label", "engine", "suite", "status", "options", "prompt_version", "created_at",
    "finished_at", "planned_count", "planned",
)  # fmt: skip
_NEWEST = "FROM runs ORDER BY created_at DESC, id DESC LIMIT {limit}"
_RUNS = f"SELECT {', '.join(COLUMNS)} {_NEWEST}"
_COUNTS = (
    f"SELECT run_id, status, count(*) FROM case_results WHERE run_id IN (SELECT id {_NEWEST}) "
    "GROUP BY run_id, status"
)
_TOTAL = "SELECT count(*) FROM runs"
_DONE = "status = 'done'"
_DIMENSIONS = (
    "SELECT run_id, dimension, sum(score), count(*) FROM case_results "
    f"WHERE {_DONE} AND kind = 'fixture' AND run_id IN (SELECT id {_NEWEST}) "
    "GROUP BY run_id, dimension"
)
_PACK_HIT = (
    "SELECT p.run_id, sum(CASE WHEN p.hit THEN 1 ELSE 0 END), count(*) FROM probe_results p "
    "JOIN case_results c ON c.run_id = p.run_id AND c.case_id = p.case_id AND c.trial = p.trial "
    f"WHERE p.scored AND c.{_DONE} AND c.kind = 'scenario' AND p.run_id IN (SELECT id {_NEWEST}) "
    "GROUP BY p.run_id"
)


class Cursor(Protocol):
    def execute(self, sql: str, /) -> object: ...
    def fetchall(self) -> Sequence[Sequence[Any]]: ...
    def close(self) -> None: ...


class Connection(Protocol):
    def cursor(self) -> Cursor: ...


def newest_runs(connection: Connection, limit: int) -> list[RunRecord]:
    """Newest first. The limit is an int written into the SQL, so neither driver's parameter
    style matters."""
    cursor = connection.cursor()
    try:
        cursor.execute(_RUNS.format(limit=int(limit)))
        rows = cursor.fetchall()
        cursor.execute(_COUNTS.format(limit=int(limit)))
        counts: dict[str, dict[str, int]] = defaultdict(dict)
        for run_id, status, n in cursor.fetchall():
            counts[run_id][status] = n
    finally:
        cursor.close()
    return [run_record(dict(zip(COLUMNS, row, strict=True)), counts[row[0]]) for row in rows]


class RunScores(BaseModel):
    """What `memeval runs` shows of a run's scores, summed in SQL over its done cases: each
    dimension's fixture scores (sum, count), and its scenarios' scored probes (hits, count)."""

    dimensions: dict[str, tuple[float, int]] = Field(default_factory=dict)
    pack_hit: tuple[int, int] = (0, 0)


class Listing(BaseModel):
    """The newest runs, their scores by run id, and how many runs the store holds in all."""

    runs: list[RunRecord]
    scores: dict[str, RunScores]
    total: int


def listing(connection: Connection, limit: int) -> Listing:
    runs = newest_runs(connection, limit)
    scores = {r.id: RunScores() for r in runs}
    cursor = connection.cursor()
    try:
        cursor.execute(_DIMENSIONS.format(limit=int(limit)))
        for run_id, dimension, total, n in cursor.fetchall():
            scores[run_id].dimensions[dimension] = (float(total or 0.0), int(n))
        cursor.execute(_PACK_HIT.format(limit=int(limit)))
        for run_id, hits, n in cursor.fetchall():
            scores[run_id].pack_hit = (int(hits), int(n))
        cursor.execute(_TOTAL)
        ((total,),) = cursor.fetchall()
    finally:
        cursor.close()
    return Listing(runs=runs, scores=scores, total=int(total))


def run_record(values: Mapping[str, Any], counts: Mapping[str, int]) -> RunRecord:
    """A run row's values, as an ORM row or a driver hands them back, as a `RunRecord`."""
    return RunRecord(
        id=values["id"],
        label=values["label"],
        engine=values["engine"],
        suite=values["suite"],
        status=RunStatus(values["status"]),
        options=_json(values["options"]),
        prompt_version=values["prompt_version"],
        created_at=as_utc(values["created_at"]),
        finished_at=as_utc(values["finished_at"]),
        planned_count=values["planned_count"],
        planned=[PlannedCase.model_validate(p) for p in _json(values["planned"])],
        counts={CaseStatus(status): n for status, n in counts.items()},
    )


@overload
def as_utc(value: datetime | str) -> datetime: ...
@overload
def as_utc(value: None) -> None: ...
def as_utc(value: datetime | str | None) -> datetime | None:
    """Aware UTC: SQLite keeps datetimes as naive text, which the store wrote in UTC."""
    if value is None:
        return None
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def local_file() -> Path | None:
    """The SQLite file the store would open, when its URL is a plain one and the file exists:
    what `sqlite3` alone can read."""
    url = os.environ.get(URL_ENV)
    if url is None:
        path = DEFAULT_PATH
    elif url.startswith(_SQLITE) and "?" not in url:
        path = Path(url.removeprefix(_SQLITE))
    else:
        return None
    path = path.resolve()
    return path if path.is_file() else None
