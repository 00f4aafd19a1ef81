"""The markdown report: the tables a reviewer reads first, then every miss in full."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from memeval.results import CaseResult, CaseStatus, Phase, ProbeResult, RunReport
from memeval.suites.fixture import WEIGHTS, Dimension

MISS_PACK_LINES = 12


def pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _share(flags: Iterable[bool]) -> str:
    items = list(flags)
    return pct(sum(items) / len(items)) if items else "–"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def _probe_row(name: str, phase: str, probes: list[ProbeResult]) -> list[str]:
    scored = [p for p in probes if p.scored]
    stale = [p for p in scored if p.fresh_first is not None]
    leak = [p for p in probes if p.forbidden]
    captured = [p.captured for p in scored if p.captured is not None]
    mrr = sum(p.rr for p in scored) / len(scored) if scored else None
    return [
        name,
        phase,
        str(len(scored)),
        _share(p.hit for p in scored),
        _share(p.extractive_ok for p in scored),
        _share(p.model_ok for p in scored if p.model_ok is not None),
        _share(captured),
        "–" if mrr is None else f"{mrr:.3f}",
        _share(bool(p.fresh_first) for p in stale),
        f"{sum(bool(p.leaked) for p in leak)}/{len(leak)}" if leak else "–",
    ]


def render(report: RunReport) -> str:
    out = [f"# memeval run `{report.label}`", ""]
    out.append(
        f"Engine `{report.engine}`, suite `{report.suite}`, run `{report.run_id}`, "
        f"started {report.started_at:%Y-%m-%d %H:%M} UTC."
    )
    statuses: dict[str, int] = defaultdict(int)
    for case in report.cases:
        statuses[case.status.value] += 1
    counts = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    out.append(
        f"Cases: {counts or 'none'}"
        + (f"; {len(report.missing)} missing." if report.missing else ".")
    )
    out += ["", *_dimensions(report), "", *_accuracy(report.cases), "", *_kpis(report)]
    out += ["", *_misses(report.cases)]
    return "\n".join(out).rstrip() + "\n"


def _dimensions(report: RunReport) -> list[str]:
    if not any(c.kind == "fixture" for c in report.cases):
        return []
    rows = []
    for dim in Dimension:
        n = sum(1 for c in report.cases if c.dimension == dim.value)
        rows.append(
            [dim.value, f"{WEIGHTS[dim]:.2f}", str(n), pct(report.dimensions.get(dim.value))]
        )
    rows.append(["**composite**", "1.00", "", f"**{pct(report.composite)}**"])
    return ["## Dimensions", "", *_table(["dimension", "weight", "fixtures", "score"], rows)]


def _accuracy(cases: list[CaseResult]) -> list[str]:
    scenarios = [c for c in cases if c.kind == "scenario"]
    if not scenarios:
        return []
    header = [
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
    ]
    rows = []
    for phase in Phase:
        for case in scenarios:
            probes = [p for p in case.probes if p.phase is phase]
            rows.append(_probe_row(case.case_id.removeprefix("lifecycle/"), phase.value, probes))
        every = [p for c in scenarios for p in c.probes if p.phase is phase]
        rows.append(_probe_row("**all**", phase.value, every))
    styles = []
    for style in ("lexical", "paraphrase"):
        probes = [p for c in scenarios for p in c.probes if p.style == style]
        styles.append(_probe_row(style, "both", probes))
    return [
        "## Lifecycle accuracy",
        "",
        *_table(header, rows),
        "",
        "### By question style",
        "",
        *_table(header, styles),
    ]


def _kpis(report: RunReport) -> list[str]:
    rows = []
    for k in report.kpis:
        value = "–" if k.value is None else (pct(k.value) if k.unit == "share" else f"{k.value:g}")
        rows.append([k.group, k.name, value, k.unit, k.better, str(k.n)])
    return ["## KPIs", "", *_table(["group", "kpi", "value", "unit", "better", "n"], rows)]


def _misses(cases: list[CaseResult]) -> list[str]:
    out = ["## Misses", ""]
    for case in cases:
        if case.status is not CaseStatus.done:
            out.append(
                f"- `{case.case_id}` #{case.trial}: **{case.status.value}** {case.error or ''}"
            )
        for p in case.probes:
            if (p.scored and not p.hit) or p.leaked:
                head = "\n".join("    " + line for line in p.pack.splitlines()[:MISS_PACK_LINES])
                why = f"leaked {p.leaked}" if p.leaked else f"expected {p.expect}"
                out.append(
                    f"- `{case.case_id}` {p.probe} ({p.phase.value}, {p.via}): {p.question} — {why}"
                )
                if p.error:
                    out.append(f"  - {p.status.value}: {p.error}")
                if head:
                    out += ["", head, ""]
        for ch in case.checks:
            if not ch.ok:
                out.append(
                    f"- `{case.case_id}` query {ch.query} `{ch.kind}: {ch.value}` "
                    f"{ch.status.value} {ch.detail}"
                )
    if len(out) == 2:
        out.append("None.")
    return out
