"""`memeval kpis`: every number a run reports, with its one-line meaning and what its `n` counts.

The list is the one the scorer computes (the composite, the dimensions, then the KPIs in report
order), so a KPI added to `memeval.scoring.kpis` shows here once it is given a meaning."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from memeval.scoring.kpis import merge, records
from memeval.scoring.meanings import MEANINGS
from memeval.suites.fixture import Dimension

out = Console()


class KpiFormat(StrEnum):
    text = "text"
    markdown = "markdown"


def listed() -> list[tuple[str, str, str, str]]:
    """(group, name, unit, better) of every number a run reports, in report order."""
    head = [("composite", "composite", "share", "higher")]
    dims = [("dimension", d.value, "share", "higher") for d in Dimension]
    kpis = [(group, name, unit, better) for group, name, _, _, unit, better in records(merge([]))]
    return [*head, *dims, *kpis]


def kpis(
    fmt: Annotated[
        KpiFormat, typer.Option("--format", help="text, or markdown (docs/kpis.md is this).")
    ] = KpiFormat.text,
) -> None:
    """Say what every KPI means and what its `n` counts.

    A share is 0–100%, a score 0–1; "better" says which way is good. A KPI shows "n/a" where
    the engine lacks the capability it needs, and "–" where nothing measured it."""
    if fmt is KpiFormat.markdown:
        print(markdown(), end="")
        return
    table = Table(show_lines=False)
    for column in ("group", "kpi", "unit", "better", "meaning", "n counts"):
        table.add_column(column, no_wrap=column == "kpi", overflow="fold")
    for group, name, unit, better in listed():
        meaning = MEANINGS[name]
        table.add_row(group, name, unit, better, meaning.what, meaning.n)
    out.print(table)


def markdown() -> str:
    lines = [
        "# What the KPIs mean",
        "",
        "Every number a run reports, in the order reports list them. `memeval kpis` prints "
        "this table (`memeval kpis --format markdown` writes this page).",
        "",
        "- **value**: a *share* reads 0–100%, a *score* 0–1; *better* says which way is good.",
        "- **n**: how many things the value is over, as the last column says. A scenario probe "
        "is asked twice, before and after the engine synthesises, so `pack_hit` over 56 probes "
        "has n = 112; with `--trials 3` every case counts three times.",
        "- **n/a**: the engine lacks the capability the KPI needs (an engine that never reports "
        "a conflict has no spurious ones); **–**: nothing in the run measured it (no `--llm`, "
        "no priced engine). Neither ever counts in a `memeval compare` verdict.",
        "",
        "| group | kpi | unit | better | meaning | n counts |",
        "|---|---|---|---|---|---|",
    ]
    for group, name, unit, better in listed():
        meaning = MEANINGS[name]
        lines.append(f"| {group} | `{name}` | {unit} | {better} | {meaning.what} | {meaning.n} |")
    return "\n".join(lines) + "\n"
