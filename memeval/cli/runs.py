"""`memeval runs`: the newest runs in the results store.

A local SQLite store is read straight through sqlite3 (`memeval.store.listing`), so the command
answers without importing SQLAlchemy or the farm; any other store, a missing file or one sqlite3
cannot read goes through the store proper, whose errors name the fix.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import closing, suppress
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from memeval.errors import UsageError
from memeval.results import CaseStatus
from memeval.scoring.kpis import composite
from memeval.store.listing import Listing, RunScores, listing, local_file
from memeval.store.models import RunRecord, RunStatus
from memeval.summary import DASH, pct

out = Console()


def runs(
    limit: Annotated[int, typer.Option(help="How many runs to list, newest first.")] = 20,
    as_json: Annotated[
        bool, typer.Option("--json", metavar="", help="Print the runs as JSON.")
    ] = False,
) -> None:
    """List the runs in the results store, newest first.

    A run of part of its suite shows which part beside the suite: "all (temporal only)".
    Its score is the composite of its dimension fixtures, else its scenarios' pack hit."""
    from memeval.summary import readable_engine, scope

    if limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    listed = _newest(limit)
    records = listed.runs
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
                    | {"score": _score(listed.scores[r.id])}
                    for r in records
                ],
                indent=2,
            )
        )
        return
    rows = [
        (
            record.id,
            record.label,
            _shown(_score(listed.scores[record.id])),
            f"{record.counts.get(CaseStatus.done, 0)}/{record.planned_count}",
            record.status.value + (", partial" if _partial(record) else ""),
            readable_engine(record.engine),
            record.suite + (f" ({subset})" if (subset := subsets[record.id]) else ""),
            f"{record.created_at:%Y-%m-%d %H:%M}",
        )
        for record in records
    ]
    table = _table(rows, out.width if out.is_terminal else None)
    # A pipe has no width to keep to: every run on one whole line, however long its suite.
    wide = out if out.is_terminal else Console(file=out.file, width=_width(table))
    wide.print(table)
    hidden = listed.total - len(records)
    if hidden > 0:
        out.print(
            f"{hidden} more: `memeval runs --limit {listed.total}` lists every run",
            highlight=False,
        )


_COLUMNS = ("run", "label", "score", "done", "status", "engine", "suite", "started")
_SPARE = ("started", "suite", "engine")
"""Left out, in this order, of a terminal too narrow for every column whole: the id, label,
score and status never are, since an id or label is what the user pastes into the next command."""
_CUT = 10
"""The fewest characters a spare column is shown in, cut with an ellipsis, rather than left out."""


def _table(rows: Sequence[tuple[str, ...]], width: int | None) -> Table:
    """One line per run: at `width` (a terminal's), the spare columns go, or the last one kept
    is cut with an ellipsis; `--json` holds every field whole."""
    widths = {c: max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(_COLUMNS)}
    shown, cut = list(_COLUMNS), None
    for spare in _SPARE:
        room = (width or 0) - sum(widths[c] + 1 for c in shown)
        if width is None or room >= 0:
            break
        shown.remove(spare)
        left = width - sum(widths[c] + 1 for c in shown) - 1
        if left >= _CUT:
            shown.append(spare)
            shown.sort(key=_COLUMNS.index)
            cut = (spare, left)
            break
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=0, show_edge=False)
    for column in shown:
        table.add_column(
            column,
            justify="right" if column in ("done", "score") else "left",
            no_wrap=True,
            width=cut[1] if cut and cut[0] == column else widths[column],
            overflow="ellipsis",
        )
    for row in rows:
        table.add_row(*(row[_COLUMNS.index(c)] for c in shown))
    return table


def _width(table: Table) -> int:
    widths = [c.width or 0 for c in table.columns]
    return sum(widths) + len(widths)


def _score(scores: RunScores) -> dict[str, float] | None:
    """The composite over the run's done fixtures, else the pack hit of its scenarios."""
    dims: dict[str, float | None] = {
        d: total / n for d, (total, n) in scores.dimensions.items() if d and n
    }
    if dims:
        return {"composite": composite(dims) or 0.0}
    hits, n = scores.pack_hit
    return {"pack_hit": hits / n} if n else None


def _shown(score: dict[str, float] | None) -> str:
    if score is None:
        return DASH
    ((name, value),) = score.items()
    return pct(value) + ("" if name == "composite" else " hit")


def _partial(record: RunRecord) -> bool:
    """An ended run whose scores leave out some planned case (lost, errored, skipped, never
    run): its composite must not read as the whole suite's."""
    ended = record.status is not RunStatus.running
    return ended and record.counts.get(CaseStatus.done, 0) < record.planned_count


def _newest(limit: int) -> Listing:
    path = local_file()
    if path is not None:
        # Not a database, or no tables yet: the store proper says which, and fixes the latter.
        with (
            suppress(sqlite3.Error),
            closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db,
        ):
            return listing(db, limit)
    from memeval.evaluation.store import usable_store

    return usable_store().runs_listing(limit)
