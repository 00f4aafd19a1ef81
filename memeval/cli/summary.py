"""What the terminal shows of a run (its summary) and of a comparison: rich tables over the
same rows and numbers the markdown reports hold."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memeval.report.caveats import (
    composite_title,
    infra_note,
    models_note,
    overbilling_note,
    partial_note,
    spend_note,
)
from memeval.report.compare import CompareReport, Comparison, Verdict
from memeval.report.compare_markdown import (
    FLIP_HEADER,
    GROUP_HEADER,
    Row,
    flip_rows,
    group_rows,
    intro,
    move_rows,
    rule,
    sweep_rows,
)
from memeval.report.numbers import kpi_number, pct
from memeval.report.triple import compare_lines, run_lines
from memeval.results import RunReport
from memeval.scoring.kpis import NEEDS
from memeval.suites.fixture import WEIGHTS, Dimension
from memeval.summary import plural, readable_engine, short_reason


def print_summary(report: RunReport, console: Console, elapsed_s: float | None = None) -> None:
    """The run's scores, ending with one line a reader can stop at: "62 of 62 cases done in
    2.4 s" (`elapsed_s`: this command's time, not the run's, which a resume spans)."""
    subset = f"  [bold]subset[/] {escape(report.subset)}" if report.subset else ""
    console.print(
        f"[bold]run[/] {report.run_id}  [bold]engine[/] {escape(readable_engine(report.engine))}  "
        f"[bold]label[/] {escape(report.label)}{subset}"
    )
    for text in run_lines(report.engine, report.kpis):
        console.print(f"[bold]{escape(text)}[/]", highlight=False)
    if any(c.kind == "fixture" for c in report.cases):
        dims = Table(title="dimensions")
        dims.add_column("dimension")
        dims.add_column("weight", justify="right")
        dims.add_column("score", justify="right")
        for dim in Dimension:
            dims.add_row(dim.value, f"{WEIGHTS[dim]:.2f}", pct(report.dimensions.get(dim.value)))
        style = "bold yellow" if report.partial else "bold"
        name = f"[{style}]{escape(composite_title(report))}[/]"
        dims.add_row(name, "", f"[bold]{pct(report.composite)}[/]")
        console.print(dims)
    kpis = Table(title="KPIs")
    for column in ("group", "kpi", "value", "n"):
        kpis.add_column(column, justify="right" if column in ("value", "n") else "left")
    for k in report.overall_kpis:
        # A cost not measured shows its dash, a KPI the engine cannot produce its n/a.
        if k.value is None and k.group != "cost" and k.name not in NEEDS:
            continue
        kpis.add_row(k.group, k.name, kpi_number(k, report.kpis), str(k.n))
    console.print(kpis)
    bad = [c for c in report.cases if c.status.value != "done"]
    if bad or report.missing:
        console.print(
            f"[yellow]{plural(len(bad), 'case')} not done, {len(report.missing)} missing[/]"
        )
        for (status, reason), n in Counter((c.status.value, c.error or "") for c in bad).items():
            why = escape(short_reason(reason)) if reason else "no reason was recorded"
            console.print(f"  [red]{status}[/] ({plural(n, 'case')}): {why}", highlight=False)
    notes = (
        (models_note(report), "cyan"),
        (partial_note(report), "yellow"),
        (infra_note(report), "dim"),
        (spend_note(report), "yellow"),
    )
    for note, style in (*notes, (overbilling_note(report), "red")):
        if note is not None:
            console.print(f"[{style}]{escape(note)}[/]", highlight=False)
    console.print(done_line(report, elapsed_s), highlight=False)


def done_line(report: RunReport, elapsed_s: float | None) -> str:
    done = sum(c.status.value == "done" for c in report.cases)
    took = "" if elapsed_s is None else f" in {elapsed_s:.1f} s"
    planned = len(report.cases) + len(report.missing)
    return f"{done} of {plural(planned, 'case')} done{took} · what each KPI means: `memeval kpis`"


_STYLE = {Verdict.better: "bold green", Verdict.worse: "bold red", Verdict.noise: "dim"}


def print_compare(report: CompareReport, console: Console) -> None:
    """The verdict lines first (one per candidate, the line to act on), then the tables."""
    console.print(escape(intro(report)), highlight=False)
    for text in compare_lines(report.table):
        console.print(f"[bold]{escape(text)}[/]", highlight=False)
    for c in report.comparisons:
        style = _STYLE.get(_lead(c.verdict), "bold")
        console.print(f"[{style}]{escape(c.headline)}[/]", highlight=False)
    console.print(f"[dim]{escape(rule(report))}[/]", highlight=False)
    console.print(
        _table("groups", GROUP_HEADER, [Row(r, Verdict.unmeasured) for r in group_rows(report)])
    )
    for c in report.comparisons:
        console.print(_moves(c))
        flips = _table("probes and checks, paired (McNemar exact)", FLIP_HEADER, flip_rows(c))
        console.print(flips)
    if len(report.table) > 2:
        rows = [Row(r, Verdict.unmeasured) for r in sweep_rows(report)]
        console.print(
            _table("scorecard on the common subset", ["group", "metric", *report.table], rows)
        )


def _moves(c: Comparison) -> Table:
    """The metrics of one comparison, in sections (accuracy, latency...); the verdict column
    says better, worse, within noise, or changed for what never gates. The intervals and why
    a change is noise are in the markdown (`--md`), which a terminal is too narrow for."""
    table = Table(title=escape(f"{c.candidate} vs {c.baseline}"), title_justify="left")
    for i, name in enumerate(["metric", c.baseline, c.candidate, "Δ", "verdict"]):
        table.add_column(escape(name), justify="right" if 0 < i < 4 else "left", no_wrap=i < 4)
    rows = move_rows(c)
    for i, r in enumerate(rows):
        group, metric, base, cand, change, *_ = (escape(cell) for cell in r.cells)
        alone = group == metric  # the composite: its own group, no heading needed
        if not alone and (not i or rows[i - 1].cells[0] != r.cells[0]):
            table.add_row(f"[bold]{group}[/]")
        shown = r.verdict.value
        if r.verdict in _STYLE:
            shown = f"[{_STYLE[r.verdict]}]{shown}[/]"
        last = i + 1 == len(rows) or rows[i + 1].cells[0] != r.cells[0]
        name = f"[bold]{metric}[/]" if alone else f"  {metric}"
        table.add_row(name, base, cand, change, shown, end_section=last)
    return table


def _lead(verdict: str) -> Verdict:
    if verdict.endswith("regression"):
        return Verdict.worse
    if verdict.endswith("improvement"):
        return Verdict.better
    return Verdict.noise if verdict == Verdict.noise.value else Verdict.unmeasured


def _table(title: str, header: list[str], rows: list[Row]) -> Table:
    """Text columns left, numbers right; a row's verdict colours its last cell."""
    table = Table(title=escape(title), title_justify="left")
    for i, name in enumerate(header):
        table.add_column(escape(name), justify="left" if i < 2 or name == "verdict" else "right")
    for r in rows:
        cells = [escape(cell) for cell in r.cells]
        style = _STYLE.get(r.verdict)
        if style is not None and header[-1] == "verdict":
            cells[-1] = f"[{style}]{cells[-1]}[/]"
        table.add_row(*cells)
    return table
