"""`memeval runs`: the newest runs in the results store.

A local SQLite store is read straight through sqlite3 (`memeval.store.listing`), so the command
answers without importing SQLAlchemy or the farm; any other store, a missing file or one sqlite3
cannot read goes through the store proper, whose errors name the fix.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing, suppress
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from memeval.errors import UsageError
from memeval.results import CaseStatus
from memeval.store.listing import local_file, newest_runs
from memeval.store.models import RunRecord, RunStatus

out = Console()


def runs(
    limit: Annotated[int, typer.Option(help="How many runs to list, newest first.")] = 20,
    as_json: Annotated[
        bool, typer.Option("--json", metavar="", help="Print the runs as JSON.")
    ] = False,
) -> None:
    """List the runs in the results store, newest first.

    A run of part of its suite shows which part beside the suite: "all (temporal only)"."""
    from memeval.summary import scope

    if limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    records = _newest(limit)
    subsets = {
        r.id: scope(r.subset, (p.dimension for p in r.planned if p.kind == "fixture"))
        for r in records
    }
    if as_json:
        print(
            json.dumps(
                [
                    r.model_dump(mode="json", exclude={"planned"})
                    | {"subset": subsets[r.id], "partial": _partial(r)}
                    for r in records
                ],
                indent=2,
            )
        )
        return
    table = Table()
    for column in ("run", "label", "engine", "suite", "status", "started", "done", "planned"):
        whole = column == "run"  # an id cut at 80 columns cannot be pasted back
        table.add_column(
            column,
            justify="right" if column in ("done", "planned") else "left",
            no_wrap=whole,
            min_width=max((len(r.id) for r in records), default=None) if whole else None,
            overflow="ignore" if whole else "fold",
        )
    for record in records:
        done = record.counts.get(CaseStatus.done, 0)
        table.add_row(
            record.id,
            record.label,
            record.engine,
            record.suite + (f" ({subset})" if (subset := subsets[record.id]) else ""),
            record.status.value + (", partial" if _partial(record) else ""),
            f"{record.created_at:%Y-%m-%d %H:%M}",
            str(done),
            str(record.planned_count),
        )
    out.print(table)


def _partial(record: RunRecord) -> bool:
    """An ended run whose scores leave out some planned case (lost, errored, skipped, never
    run): its composite must not read as the whole suite's."""
    ended = record.status is not RunStatus.running
    return ended and record.counts.get(CaseStatus.done, 0) < record.planned_count


def _newest(limit: int) -> list[RunRecord]:
    path = local_file()
    if path is not None:
        # Not a database, or no tables yet: the store proper says which, and fixes the latter.
        with (
            suppress(sqlite3.Error),
            closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db,
        ):
            return newest_runs(db, limit)
    from memeval.evaluation.store import usable_store

    return usable_store().list_runs(limit)
