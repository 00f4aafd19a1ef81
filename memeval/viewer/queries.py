"""What the viewer reads from the results store, in a few aggregate SQL statements.

A page of 500 runs must render in well under a second, so the runs list never folds a run's
case results into a report: the composite comes from one grouped query over the stored scores
(the same rule as `memeval.scoring.kpis.dimension_scores`: the mean score of each dimension's
finished fixtures, then the weighted composite), and cost from the stored micro-dollars. Only a
run's own page folds its whole report. Nothing here writes.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, field_validator
from sqlalchemy import text

from memeval.results import CaseResult, CaseStatus
from memeval.scoring.kpis import composite
from memeval.store import Store
from memeval.store.listing import as_utc
from memeval.store.models import RunStatus

MICROS = 1_000_000
PER_PAGE = 100
ERRORED = (CaseStatus.error, CaseStatus.lost)


class RunFilter(BaseModel):
    """The runs list's filters, straight from the query string."""

    engine: str | None = None
    suite: str | None = None
    label: str | None = None
    status: RunStatus | None = None
    page: int = Field(default=1, ge=1)
    per_page: int = Field(default=PER_PAGE, ge=1, le=10_000)

    @field_validator("engine", "suite", "label", "status", mode="before")
    @classmethod
    def _blank_is_any(cls, value: object) -> object:
        """An empty box in the filter form means "any", not "named the empty string"."""
        return None if value == "" else value


class RunSummary(BaseModel):
    id: str
    label: str
    engine: str
    suite: str
    subset: str | None
    status: RunStatus
    planned: int
    landed: int
    done: int
    errored: int
    composite: float | None
    usd: float | None = Field(description="Engine and model spend; None where nothing was priced.")
    budget_usd: float | None
    started_at: datetime
    finished_at: datetime | None
    fingerprint: str = Field(description="Suite, subset and settings: runs alike share it.")

    @property
    def duration_s(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


class CaseLine(BaseModel):
    case_id: str
    trial: int
    kind: str
    dimension: str | None
    status: CaseStatus
    score: float | None
    error: str | None
    duration_ms: float | None


class Progress(BaseModel):
    """A run's page polls this while the run is running."""

    run: RunSummary
    counts: dict[str, int]
    recent_errors: list[CaseLine]
    waiting: list[str] = Field(description="Planned cases with no result yet (the first few).")


def fingerprint(suite: str, options: dict[str, Any]) -> str:
    blob = json.dumps({"suite": suite, "options": options}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


_RUN_COLUMNS = "id, label, engine, suite, status, options, created_at, finished_at, planned_count"


def _where(f: RunFilter) -> tuple[str, dict[str, Any]]:
    clauses, params = [], {}
    for name in ("engine", "suite", "label", "status"):
        value = getattr(f, name)
        if value:
            clauses.append(f"{name} = :{name}")
            params[name] = str(value)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def list_runs(store: Store, f: RunFilter) -> tuple[list[RunSummary], int]:
    """One page of runs, newest first, and how many runs the filter matches in all."""
    where, params = _where(f)
    with store.engine.connect() as db:
        total = db.execute(text(f"SELECT count(*) FROM runs{where}"), params).scalar_one()
        rows = db.execute(
            text(
                f"SELECT {_RUN_COLUMNS} FROM runs{where} ORDER BY created_at DESC, id DESC "
                "LIMIT :limit OFFSET :offset"
            ),
            {**params, "limit": f.per_page, "offset": (f.page - 1) * f.per_page},
        ).all()
        summaries = _summaries(db, [dict(r._mapping) for r in rows])
    return summaries, int(total)


def get_run(store: Store, run_id: str) -> RunSummary | None:
    with store.engine.connect() as db:
        row = db.execute(
            text(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = :id"), {"id": run_id}
        ).first()
        return None if row is None else _summaries(db, [dict(row._mapping)])[0]


def _summaries(db: Any, rows: list[dict[str, Any]]) -> list[RunSummary]:
    if not rows:
        return []
    ids = {f"r{i}": row["id"] for i, row in enumerate(rows)}
    within = ", ".join(f":{k}" for k in ids)
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    dims: dict[str, dict[str, float | None]] = defaultdict(dict)
    spend: dict[str, int] = defaultdict(int)
    for run_id, status, n, usd in db.execute(
        text(
            "SELECT run_id, status, count(*), sum(engine_usd_micros + answerer_usd_micros) "
            f"FROM case_results WHERE run_id IN ({within}) GROUP BY run_id, status"
        ),
        ids,
    ):
        counts[run_id][status] = int(n)
        spend[run_id] += int(usd or 0)
    for run_id, dimension, mean in db.execute(
        text(
            "SELECT run_id, dimension, avg(coalesce(score, 0)) FROM case_results "
            f"WHERE run_id IN ({within}) AND status = 'done' AND dimension IS NOT NULL "
            "GROUP BY run_id, dimension"
        ),
        ids,
    ):
        dims[run_id][dimension] = float(mean)
    paid = dict(
        db.execute(
            text(
                "SELECT run_id, sum(charged_micros) FROM paid_calls "
                f"WHERE run_id IN ({within}) GROUP BY run_id"
            ),
            ids,
        ).all()
    )
    return [_summary(row, counts[row["id"]], dims[row["id"]], spend, paid) for row in rows]


def _summary(
    row: dict[str, Any],
    counts: dict[str, int],
    dims: dict[str, float | None],
    spend: dict[str, int],
    paid: dict[str, Any],
) -> RunSummary:
    options = row["options"] if isinstance(row["options"], dict) else json.loads(row["options"])
    micros = max(spend[row["id"]], int(paid.get(row["id"]) or 0))
    budget = options.get("budget_micros")
    priced = micros > 0 or options.get("llm") is not None
    return RunSummary(
        id=row["id"],
        label=row["label"],
        engine=row["engine"],
        suite=row["suite"],
        subset=options.get("subset") or None,
        status=RunStatus(row["status"]),
        planned=row["planned_count"],
        landed=sum(counts.values()),
        done=counts.get(CaseStatus.done, 0),
        errored=sum(counts.get(s, 0) for s in ERRORED),
        composite=composite(dims),
        usd=micros / MICROS if priced else None,
        budget_usd=None if budget is None else budget / MICROS,
        started_at=as_utc(row["created_at"]),
        finished_at=as_utc(row["finished_at"]),
        fingerprint=fingerprint(row["suite"], options),
    )


def case_lines(store: Store, run_id: str, page: int, per_page: int = PER_PAGE) -> list[CaseLine]:
    """A run's cases, failures first: errored and lost, then the lowest scores."""
    with store.engine.connect() as db:
        rows = db.execute(
            text(
                "SELECT case_id, trial, kind, dimension, status, score, error, duration_ms "
                "FROM case_results WHERE run_id = :id "
                "ORDER BY CASE WHEN status = 'done' THEN 1 ELSE 0 END, coalesce(score, 0), "
                "case_id, trial LIMIT :limit OFFSET :offset"
            ),
            {"id": run_id, "limit": per_page, "offset": (page - 1) * per_page},
        ).all()
    return [CaseLine.model_validate(dict(r._mapping)) for r in rows]


def case_result(store: Store, run_id: str, case_id: str, trial: int) -> CaseResult | None:
    with store.engine.connect() as db:
        payload = db.execute(
            text(
                "SELECT payload FROM case_results "
                "WHERE run_id = :id AND case_id = :case AND trial = :trial"
            ),
            {"id": run_id, "case": case_id, "trial": trial},
        ).scalar_one_or_none()
    if payload is None:
        return None
    return CaseResult.model_validate(payload if isinstance(payload, dict) else json.loads(payload))


def progress(store: Store, run: RunSummary, planned: list[tuple[str, int]]) -> Progress:
    with store.engine.connect() as db:
        counts = {
            status: int(n)
            for status, n in db.execute(
                text(
                    "SELECT status, count(*) FROM case_results WHERE run_id = :id GROUP BY status"
                ),
                {"id": run.id},
            )
        }
        errors = db.execute(
            text(
                "SELECT case_id, trial, kind, dimension, status, score, error, duration_ms "
                "FROM case_results WHERE run_id = :id AND status IN ('error', 'lost') "
                "ORDER BY updated_at DESC LIMIT 20"
            ),
            {"id": run.id},
        ).all()
        landed = {
            (case, trial)
            for case, trial in db.execute(
                text("SELECT case_id, trial FROM case_results WHERE run_id = :id"), {"id": run.id}
            )
        }
    waiting = [f"{c}#{t}" for c, t in planned if (c, t) not in landed]
    return Progress(
        run=run,
        counts=counts,
        recent_errors=[CaseLine.model_validate(dict(r._mapping)) for r in errors],
        waiting=waiting[:20],
    )


def leaderboard(runs: list[RunSummary]) -> dict[str, list[RunSummary]]:
    """One board per suite and settings, one row per engine (its latest finished run), best
    first: runs that differ in suite, subset or settings are never ranked against each other."""
    latest: dict[tuple[str, str, str], RunSummary] = {}
    for run in runs:  # newest first
        if run.status is RunStatus.finished and run.composite is not None:
            latest.setdefault((run.suite, run.engine, run.fingerprint), run)
    boards: dict[str, list[RunSummary]] = defaultdict(list)
    for (suite, _, settings), run in latest.items():
        subset = f" ({run.subset})" if run.subset else ""
        boards[f"{suite}{subset} · settings {settings}"].append(run)
    return {
        suite: sorted(rows, key=lambda r: -(r.composite or 0.0))
        for suite, rows in sorted(boards.items())
    }
