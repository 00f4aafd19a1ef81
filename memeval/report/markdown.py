"""The markdown report: the tables a reviewer reads first, then every miss in full."""

from __future__ import annotations

import re

from memeval.importers.sources import is_benchmark
from memeval.llm.agreement import agreement
from memeval.llm.judge import JUDGE_PROMPT_VERSION, PROMPTS_SHA256, all_prompts
from memeval.report.caveats import (
    composite_title,
    engine_models_note,
    infra_note,
    models_note,
    overbilling_note,
    partial_note,
    spend_note,
)
from memeval.report.intervals import RunIntervals, headline_titles, run_intervals
from memeval.report.numbers import DASH, ci, kpi_number, ms, number, pct, sample
from memeval.report.scorecard import COMPOSITE
from memeval.report.stats import Interval, Spread
from memeval.report.tables import (
    AccuracyRow,
    accuracy_rows,
    check_tag_rows,
    latency_rows,
    misses,
    status_counts,
    style_rows,
    tag_rows,
    usage,
    worst_scenarios,
)
from memeval.report.triple import run_lines
from memeval.results import RunReport
from memeval.suites.fixture import WEIGHTS, Dimension
from memeval.summary import readable_engine


def sd(spread: Spread | None, unit: str = "share") -> str:
    """The spread across trials; shares in points, so "±2.1 pts" reads without arithmetic."""
    if spread is None:
        return DASH
    if unit == "share":
        return f"±{100 * spread.sd:.1f} pts ({pct(spread.low)} – {pct(spread.high)})"
    return f"±{number(spread.sd, unit)}"


def one_line(text: str) -> str:
    return " ".join(text.split())


def literal(text: str) -> str:
    """Suite or engine text as a code span: markup in a pack shows as text, never renders."""
    flat = one_line(text)
    if not flat:
        return ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat[0] == "`" or flat[-1] == "`" else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def fenced(lines: list[str]) -> list[str]:
    """A code block whose fence outruns any backticks inside, so a pack cannot close it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *lines, fence]


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in r) + " |" for r in rows]
    return lines


def render(report: RunReport, intervals: RunIntervals | None = None) -> str:
    ci_ = intervals or run_intervals(report)
    out = [f"# memeval run `{report.label}`", ""]
    finished = f", finished {report.finished_at:%H:%M}" if report.finished_at else ""
    subset = f" ({report.subset})" if report.subset else ""
    out.append(
        f"Engine {literal(readable_engine(report.engine))}, suite {literal(report.suite)}"
        f"{subset}, run `{report.run_id}`, "
        f"started {report.started_at:%Y-%m-%d %H:%M}{finished} UTC."
    )
    trials = len({c.trial for c in report.cases})
    out.append(
        f"Cases: {status_counts(report.cases)}"
        + (f" over {trials} trials" if trials > 1 else "")
        + (f"; {len(report.missing)} missing." if report.missing else ".")
    )
    if (used := models_note(report)) is not None:
        out += ["", f"Model: {used}."]
    if (engine_used := engine_models_note(report)) is not None:
        out += ["", f"Engine models: {engine_used[len('engine models: ') :]}."]
    out += ["", *(f"**{text}**" for text in run_lines(report.engine, report.kpis))]
    partial, infra = partial_note(report, every=True), infra_note(report)
    if partial is not None:
        out += ["", f"**P{partial[1:]}.** Resume the run to score them."]
    if infra is not None:
        out += ["", f"I{infra[1:]}."]
    if (spent := spend_note(report)) is not None:
        out += ["", f"M{spent[1:]}."]
    if (overbilled := overbilling_note(report)) is not None:
        out += ["", f"**W{overbilled[1:]}.**"]
    sections = [
        _headline(ci_, composite_title(report), report.partial, trials, is_benchmark(report.suite)),
        _dimensions(report, ci_, trials),
        _accuracy(report),
        _latency(report),
        _usage(report),
        _kpis(report, ci_),
        _judge(report),
        _misses(report),
    ]
    for section in sections:
        if section:
            out += ["", *section]
    return visible("\n".join(out).rstrip() + "\n")


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with every control character but the newline and tab written as `\\xNN`: a
    report quotes suite and engine text, and an ESC sequence in it would recolour, move or
    retitle the terminal of whoever `cat`s the file."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _headline(
    ci_: RunIntervals,
    composite: str,
    partial: bool = False,
    trials: int = 1,
    benchmark: bool = False,
) -> list[str]:
    lines = []
    for name, title in headline_titles(ci_, composite, partial, benchmark=benchmark):
        interval = ci_.intervals[name]
        line = f"- **{title[:1].upper() + title[1:]} {pct(interval.value)}**"
        line += f" (95% CI {ci(interval)}, {sample(interval, trials)})"
        if name in ci_.trials:
            line += f"; across trials {sd(ci_.trials[name])}"
        lines.append(line)
    if not lines:
        return []
    note = (
        f"95% CI: bootstrap over cases ({ci_.resamples} resamples, seeded), "
        "a case's trials resampled together."
    )
    return ["## Headline", "", *lines, "", note]


def _dimensions(report: RunReport, ci_: RunIntervals, trials: int = 1) -> list[str]:
    if not any(c.kind == "fixture" for c in report.cases):
        return []
    header = ["dimension", "weight", "fixtures", "score", "95% CI"]
    with_trials = bool(ci_.trials)
    if with_trials:
        header.append("across trials")
    rows = []
    for name, weight in [*((d.value, WEIGHTS[d]) for d in Dimension), (COMPOSITE, 1.0)]:
        interval = ci_.intervals.get(name)
        shown = f"**{composite_title(report)}**" if name == COMPOSITE else name
        row = [
            shown,
            f"{weight:.2f}",
            _fixtures(interval, trials),
            pct(interval.value if interval else None),
            ci(interval),
        ]
        if with_trials:
            row.append(sd(ci_.trials.get(name)))
        rows.append(row)
    return ["## Dimensions", "", *table(header, rows)]


def _fixtures(interval: Interval | None, trials: int) -> str:
    """Fixtures, not fixture runs: "10 × 3 trials", never 30 for ten fixtures."""
    if interval is None:
        return "0"
    if trials > 1 and interval.cases:
        return f"{interval.cases} × {trials} trials"
    return str(interval.n)


_ACCURACY = [
    "scenario",
    "phase",
    "probes",
    "pack hit",
    "extractive",
    "model",
    "captured",
    "MRR",
    "fresh first",
    "leaks",
    "F1",
    "evidence",
]


def _accuracy_cells(row: AccuracyRow) -> list[str]:
    name = f"**{row.name}**" if row.name == "all" else row.name
    return [
        name,
        row.phase,
        str(row.probes),
        pct(row.pack_hit),
        pct(row.extractive),
        pct(row.model),
        pct(row.captured),
        number(row.mrr, "score"),
        pct(row.fresh_first),
        f"{row.leaks}/{row.leak_checks}" if row.leak_checks else DASH,
        number(row.f1, "score"),
        pct(row.evidence),
    ]


def _accuracy(report: RunReport) -> list[str]:
    rows, scenarios = worst_scenarios(accuracy_rows(report.cases))
    if not rows:
        return []
    styles = [_accuracy_cells(r) for r in style_rows(report.cases)]
    shown = len({r.name for r in rows}) - 1
    cut = (
        [
            "",
            f"The {shown} of {scenarios} scenarios missing the most probes, and all of them "
            "pooled; every case is in report.json and report.html.",
        ]
        if shown < scenarios
        else []
    )
    out = [
        "## Accuracy by scenario and phase",
        "",
        *table(_ACCURACY, [_accuracy_cells(r) for r in rows]),
        *cut,
        "",
        "## Scores by question style",
        "",
        *table(["style", *_ACCURACY[1:]], styles),
    ]
    tags = [_accuracy_cells(r) for r in tag_rows(report.cases)]
    if tags:
        out += ["", "## Scores by probe tag", "", *table(["tag", *_ACCURACY[1:]], tags)]
    checks = [[r.tag, str(r.checks), pct(r.passed)] for r in check_tag_rows(report.cases)]
    if checks:
        out += [
            "",
            "## Fixture checks by query tag",
            "",
            *table(["tag", "checks", "passed"], checks),
        ]
    return out


def _latency(report: RunReport) -> list[str]:
    rows = [
        [r.step, r.call, str(r.n), *(ms(v) for v in (r.p50, r.p95, r.p99, r.max))]
        for r in latency_rows(report.cases)
    ]
    if not rows:
        return []
    header = ["step", "call", "n", "p50 ms", "p95 ms", "p99 ms", "max ms"]
    return ["## Latency per step", "", *table(header, rows)]


def _usage(report: RunReport) -> list[str]:
    used = usage(report.cases)
    spend = [
        [
            "engine",
            number(used.engine_usd, "usd"),
            DASH
            if used.engine_calls is None
            else f"{used.engine_calls} calls, {used.engine_tokens} tokens",
        ],
        [
            "answering model",
            number(used.answerer_usd if used.model_answers else None, "usd"),
            f"{used.model_answers} answers, {used.model_tokens} tokens",
        ],
        ["packs", DASH, f"{used.pack_tokens} tokens"],
    ]
    calls = [[c.call, str(c.calls), ms(c.total_ms)] for c in used.calls]
    return [
        "## Model and engine usage",
        "",
        *table(["who", "spent", "volume"], spend),
        "",
        *table(["engine call", "calls", "total ms"], calls),
    ]


def _kpis(report: RunReport, ci_: RunIntervals) -> list[str]:
    rows = []
    for k in report.overall_kpis:
        shown = kpi_number(k, report.kpis)
        interval = DASH if shown == DASH else ci(ci_.intervals.get(k.name), k.unit)
        rows.append([k.group, k.name, shown, interval, k.unit, k.better, str(k.n)])
    header = ["group", "kpi", "value", "95% CI", "unit", "better", "n"]
    return ["## KPIs", "", *table(header, rows)]


def _judge(report: RunReport) -> list[str]:
    """The judges' prompts, whenever a verdict is in the run: a score means nothing without
    them. A stored run graded under an older version says so instead of showing today's text.
    With several judges, how far they agree and where they split."""
    notes = [p.judge_note for c in report.cases for p in c.probes if p.judge_note]
    if not notes:
        return []
    used = sorted({n.split(":", 1)[0] for n in notes})
    out = [
        "## Model judge",
        "",
        f"Verdicts: {len(notes)}; prompt(s): {', '.join(used)}; "
        f"this memeval's prompts hash to `{PROMPTS_SHA256[:16]}`.",
    ]
    texts = all_prompts()
    for name in used:
        if name in texts:
            out += ["", f"`{name}`:", "", *fenced(texts[name].splitlines())]
        else:
            out += [
                "",
                f"`{name}`: this memeval holds {JUDGE_PROMPT_VERSION} only; see its history.",
            ]
    return out + _agreement(report)


def _agreement(report: RunReport) -> list[str]:
    found = agreement(report.cases)
    if found is None:
        return []
    rows = [
        [
            p.a,
            p.b,
            str(p.n),
            DASH if p.percent is None else f"{p.percent:.1f}%",
            DASH if p.kappa is None else f"{p.kappa:.2f}",
        ]
        for p in found.pairs
    ]
    out = ["", "### Judge agreement", "", *table(["judge", "judge", "n", "agree", "kappa"], rows)]
    out += ["", f"Probes the judges split on: {len(found.disagreements)}.", ""]
    for d in found.disagreements:
        votes = ", ".join(
            f"{m}={DASH if ok is None else 'right' if ok else 'wrong'}"
            for m, ok in d.verdicts.items()
        )
        out.append(f"- `{d.case_id}` #{d.trial} {d.probe} ({d.phase}): {votes}")
    return out


MISS_PACKS = 50  # misses shown with the head of their pack (a small run: all of them)
MISS_LINES = 200  # misses listed at all: past these the file would be a dump, not a report


def _clip(line: str, most: int = 300) -> str:
    """A pack line cut to what shows what the engine returned: a benchmark's turns run to
    a thousand characters, and the whole pack is in report.json and report.html."""
    return line if len(line) <= most else line[: most - 1] + "…"


def _misses(report: RunReport) -> list[str]:
    out = ["## Misses", ""]
    found = misses(report.cases)
    for n, m in enumerate(found[:MISS_LINES]):
        line = f"- `{m.case_id}` #{m.trial} {m.where}: **{m.status}**"
        if m.question:
            line += f" — {literal(m.question)}"
        if m.expected:
            line += f" — {literal(m.expected)}"
        out.append(line)
        if m.detail:
            out.append(f"  - {literal(m.detail)}")
        if m.head and n < MISS_PACKS:
            out += ["", *fenced([_clip(line) for line in m.head]), ""]
    if not found:
        out.append("None.")
    elif len(found) > MISS_PACKS:
        listed = min(len(found), MISS_LINES)
        unlisted = len(found) - listed
        rest = f"; the other {unlisted} are not listed here" if unlisted else ""
        out += [
            "",
            f"{len(found)} misses: the first {MISS_PACKS} with the head of their pack, "
            f"{listed - MISS_PACKS} more as a line each{rest}. Every miss, with its whole "
            "pack, is in report.json and report.html (choose “misses only”).",
        ]
    return out
