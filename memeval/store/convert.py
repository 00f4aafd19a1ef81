"""Between `memeval.results` models and table rows: the payload plus its queryable projections."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memeval.results import CaseResult
from memeval.store.listing import run_record as record_of
from memeval.store.models import RunRecord
from memeval.store.tables import RunRow


def case_values(result: CaseResult, now: datetime) -> dict[str, Any]:
    duration_ms = (
        (result.finished_at - result.started_at).total_seconds() * 1000
        if result.started_at and result.finished_at
        else None
    )
    return {
        "run_id": result.run_id,
        "case_id": result.case_id,
        "trial": result.trial,
        "kind": result.kind,
        "dimension": result.dimension,
        "status": result.status.value,
        "score": result.score,
        "engine": result.engine,
        "tenant": result.tenant,
        "error": result.error,
        "engine_usd_micros": result.engine_usd_micros,
        "answerer_usd_micros": result.answerer_usd_micros,
        "started_at": result.started_at,
        "finished_at": result.finished_at,
        "duration_ms": duration_ms,
        "payload": result.model_dump(mode="json"),
        "created_at": now,
        "updated_at": now,
    }


def probe_values(result: CaseResult) -> list[dict[str, Any]]:
    key = {"run_id": result.run_id, "case_id": result.case_id, "trial": result.trial}
    return [
        {
            **key,
            "seq": seq,
            "probe": p.probe,
            "phase": p.phase.value,
            "via": p.via,
            "style": p.style,
            "scored": p.scored,
            "status": p.status.value,
            "hit": p.hit,
            "rank": p.rank,
            "fresh_first": p.fresh_first,
            "stale_first": p.stale_first,
            "leaks": len(p.leaked),
            "pack_tokens": p.pack_tokens,
            "extractive_ok": p.extractive_ok,
            "model_ok": p.model_ok,
            "captured": p.captured,
        }
        for seq, p in enumerate(result.probes)
    ]


def check_values(result: CaseResult) -> list[dict[str, Any]]:
    key = {"run_id": result.run_id, "case_id": result.case_id, "trial": result.trial}
    return [
        {
            **key,
            "seq": seq,
            "query": c.query,
            "kind": c.kind,
            "value": c.value,
            "status": c.status.value,
        }
        for seq, c in enumerate(result.checks)
    ]


def run_record(row: RunRow, counts: Mapping[str, int]) -> RunRecord:
    return record_of(row.model_dump(), counts)
