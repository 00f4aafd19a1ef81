"""`memeval compare` as markdown: the verdicts first, then the numbers and flips behind them.

The rows are built here once; the terminal draws the same rows as tables."""

from __future__ import annotations

from typing import NamedTuple

from memeval.report.compare import HEADLINES, RULE, CompareReport, Comparison, Move, Verdict
from memeval.report.markdown import literal, table
from memeval.report.numbers import DASH, delta, delta_span, number, pct, unpriced
from memeval.report.stats import Spread
from memeval.report.triple import compare_lines
from memeval.summary import plural

MOVE_HEADER = ["group", "metric", "baseline", "candidate", "Δ", "95% CI of Δ", "verdict"]
FLIP_HEADER = ["scope", "units", "lost", "gained", "p", "verdict"]
GROUP_HEADER = ["group", "runs", "results", "composite across runs", "pack hit across runs"]


MOVES = (Verdict.better, Verdict.worse)
"""The verdicts a table marks out: beyond noise in a group that gates."""


class Row(NamedTuple):
    cells: list[str]
    verdict: Verdict


def intro(report: CompareReport) -> str:
    outside = sum(g.outside for g in report.groups)
    return (
        f"Grouped by {report.by.value}; baseline `{report.baseline}`; "
        f"{plural(len(report.common), 'case')} in common"
        + (f" ({outside} case ids outside the common subset left out)." if outside else ".")
    )


def rule(report: CompareReport) -> str:
    return f"{RULE} {report.resamples} resamples." + (
        f" Sums ({', '.join(report.per_pass)}) are per pass over the common cases."
        if report.per_pass
        else ""
    )


def group_rows(report: CompareReport) -> list[list[str]]:
    return [
        [g.name, str(len(g.runs)), str(g.results), *(_across(g.repeats.get(m)) for m in HEADLINES)]
        for g in report.groups
    ]


def move_verdict(m: Move) -> str:
    """Latency and cost moves read "changed", never "worse": they depend on the machine and
    on prices, so they never gate and must not read as if they did."""
    if m.verdict is Verdict.noise:
        return f"within noise ({m.why})"
    if m.verdict is Verdict.changed:
        return f"changed ({m.why})"
    return m.verdict.value


def move_rows(c: Comparison) -> list[Row]:
    """Every metric measured on either side, as text cells, with its verdict for styling.
    Spend neither side measured (no model answered) is left out, as a run report shows it
    as a dash."""
    rows = []
    base_unpriced = unpriced({m.name: m.base for m in c.moves})
    cand_unpriced = unpriced({m.name: m.cand for m in c.moves})
    for m in c.moves:
        if m.delta is None and m.base is None and m.cand is None:
            continue
        if m.name in base_unpriced and m.name in cand_unpriced:
            continue
        cells = [
            m.group,
            m.name,
            DASH if m.name in base_unpriced else number(m.base, m.unit),
            DASH if m.name in cand_unpriced else number(m.cand, m.unit),
            delta(m.delta, m.unit),
            delta_span(m.low, m.high, m.unit),
            move_verdict(m),
        ]
        rows.append(Row(cells, m.verdict))
    return rows


def flip_rows(c: Comparison) -> list[Row]:
    return [
        Row(
            [f.scope, str(f.units), str(f.lost), str(f.gained), f"{f.p:.3g}", f.verdict.value],
            f.verdict,
        )
        for f in c.flips
    ]


def sweep_rows(report: CompareReport) -> list[list[str]]:
    """Every group's scorecard side by side, for a comparison of more than two groups."""
    names = list(report.table)
    return [
        [k.group, k.name, *(number(report.table[n][i].value, k.unit) for n in names)]
        for i, k in enumerate(report.table[names[0]])
    ]


def render_compare(report: CompareReport) -> str:
    out = [
        "# memeval compare",
        "",
        intro(report),
        "",
        *(f"- **{text}**" for text in compare_lines(report.table)),
        "",
        "## Verdicts",
        "",
        *(f"- **{c.headline}**" for c in report.comparisons),
        "",
        rule(report),
        "",
        "## Groups",
        "",
        *table(GROUP_HEADER, group_rows(report)),
    ]
    for comparison in report.comparisons:
        out += ["", *_comparison(comparison)]
    if len(report.table) > 2:
        out += ["", *_sweep(report)]
    return "\n".join(out).rstrip() + "\n"


def _across(spread: Spread | None) -> str:
    if spread is None:
        return DASH
    return f"{pct(spread.mean)} ±{100 * spread.sd:.1f} pts (n={spread.n})"


def _comparison(c: Comparison) -> list[str]:
    rows = [
        [*r.cells[:-1], f"**{r.cells[-1]}**" if r.verdict in MOVES else r.cells[-1]]
        for r in move_rows(c)
    ]
    header = [*MOVE_HEADER[:2], c.baseline, c.candidate, *MOVE_HEADER[4:]]
    flips = [r.cells for r in flip_rows(c)]
    out = [
        f"## {c.candidate} vs {c.baseline}",
        "",
        *table(header, rows),
        "",
        "### Probes and checks, paired (McNemar exact)",
        "",
        *table(FLIP_HEADER, flips),
    ]
    examples = [(f, t.scope) for t in c.flips for f in t.examples]
    if examples:
        out += ["", "Flipped units (a few per scope):", ""]
        for f, scope in examples:
            way = "lost" if f.base > f.cand else "gained"
            out.append(f"- {way} `{f.case_id}` {scope} {f.item}: {literal(f.text)}")
    return out


def _sweep(report: CompareReport) -> list[str]:
    header = ["group", "metric", *report.table]
    return ["## Scorecard on the common subset", "", *table(header, sweep_rows(report))]
