"""`memeval compare` as markdown: the verdicts first, then the numbers and flips behind them."""

from __future__ import annotations

from memeval.report.compare import HEADLINES, RULE, CompareReport, Comparison, Verdict
from memeval.report.markdown import DASH, literal, number, pct, table
from memeval.report.stats import Spread


def delta(value: float | None, unit: str) -> str:
    """Changes of shares in percentage points, which is how people say them aloud."""
    if value is None:
        return DASH
    if unit == "share":
        return f"{100 * value:+.1f} pts"
    if unit == "ms":
        return f"{value:+.1f} ms"
    return f"{value:+.4g}"


def render_compare(report: CompareReport) -> str:
    outside = sum(g.outside for g in report.groups)
    out = [
        "# memeval compare",
        "",
        f"Grouped by {report.by.value}; baseline `{report.baseline}`; "
        f"{len(report.common)} cases in common"
        + (f" ({outside} case ids outside the common subset left out)." if outside else "."),
        "",
        "## Verdicts",
        "",
        *(f"- **{c.headline}**" for c in report.comparisons),
        "",
        f"{RULE} {report.resamples} resamples."
        + (
            f" Sums ({', '.join(report.per_pass)}) are per pass over the common cases."
            if report.per_pass
            else ""
        ),
        "",
        "## Groups",
        "",
        *table(
            ["group", "runs", "results", "composite across runs", "pack hit across runs"],
            [
                [
                    g.name,
                    str(len(g.runs)),
                    str(g.results),
                    *(_across(g.repeats.get(m)) for m in HEADLINES),
                ]
                for g in report.groups
            ],
        ),
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
    rows = []
    for m in c.moves:
        if m.delta is None and m.base is None and m.cand is None:
            continue
        shown = m.verdict.value if m.verdict is not Verdict.noise else f"within noise ({m.why})"
        if m.verdict in (Verdict.better, Verdict.worse):
            shown = f"**{shown}**"
        ci = DASH if m.low is None else f"{delta(m.low, m.unit)} … {delta(m.high, m.unit)}"
        rows.append(
            [
                m.group,
                m.name,
                number(m.base, m.unit),
                number(m.cand, m.unit),
                delta(m.delta, m.unit),
                ci,
                shown,
            ]
        )
    header = ["group", "metric", c.baseline, c.candidate, "Δ", "95% CI of Δ", "verdict"]
    flips = [
        [f.scope, str(f.units), str(f.lost), str(f.gained), f"{f.p:.3g}", f.verdict.value]
        for f in c.flips
    ]
    out = [
        f"## {c.candidate} vs {c.baseline}",
        "",
        *table(header, rows),
        "",
        "### Probes and checks, paired (McNemar exact)",
        "",
        *table(["scope", "units", "lost", "gained", "p", "verdict"], flips),
    ]
    examples = [(f, t.scope) for t in c.flips for f in t.examples]
    if examples:
        out += ["", "Flipped units (a few per scope):", ""]
        for f, scope in examples:
            way = "lost" if f.base > f.cand else "gained"
            out.append(f"- {way} `{f.case_id}` {scope} {f.item}: {literal(f.text)}")
    return out


def _sweep(report: CompareReport) -> list[str]:
    names = list(report.table)
    first = report.table[names[0]]
    rows = []
    for i, k in enumerate(first):
        cells = [number(report.table[n][i].value, k.unit) for n in names]
        rows.append([k.group, k.name, *cells])
    return ["## Scorecard on the common subset", "", *table(["group", "metric", *names], rows)]
