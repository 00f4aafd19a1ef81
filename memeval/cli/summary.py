"""The terminal summary printed at the end of a run."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memeval.report.caveats import infra_note, overbilling_note, partial_note
from memeval.report.markdown import pct
from memeval.results import RunReport
from memeval.suites.fixture import WEIGHTS, Dimension


def print_summary(report: RunReport, console: Console) -> None:
    console.print(
        f"[bold]run[/] {report.run_id}  [bold]engine[/] {report.engine}  "
        f"[bold]label[/] {report.label}"
    )
    if any(c.kind == "fixture" for c in report.cases):
        dims = Table(title="dimensions")
        dims.add_column("dimension")
        dims.add_column("weight", justify="right")
        dims.add_column("score", justify="right")
        for dim in Dimension:
            dims.add_row(dim.value, f"{WEIGHTS[dim]:.2f}", pct(report.dimensions.get(dim.value)))
        name = "[bold]composite[/]" + (" [yellow](partial)[/]" if report.partial else "")
        dims.add_row(name, "", f"[bold]{pct(report.composite)}[/]")
        console.print(dims)
    kpis = Table(title="KPIs")
    for column in ("group", "kpi", "value", "n"):
        kpis.add_column(column, justify="right" if column in ("value", "n") else "left")
    for k in report.overall_kpis:
        if k.value is None:
            continue
        value = pct(k.value) if k.unit == "share" else f"{k.value:g} {k.unit}"
        kpis.add_row(k.group, k.name, value, str(k.n))
    console.print(kpis)
    bad = [c for c in report.cases if c.status.value != "done"]
    if bad or report.missing:
        console.print(f"[yellow]{len(bad)} cases not done, {len(report.missing)} missing[/]")
    notes = ((partial_note(report), "yellow"), (infra_note(report), "dim"))
    for note, style in (*notes, (overbilling_note(report), "red")):
        if note is not None:
            console.print(f"[{style}]{escape(note)}[/]", highlight=False)
