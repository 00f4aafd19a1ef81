"""One self-contained HTML file per report: the data as inline JSON, drawn by inline vanilla JS.

The page must open from a mail attachment or a CI artifact with no network, so nothing is
fetched, and its Content-Security-Policy forbids fetching anything at all. The policy also
allows only the exact script and stylesheet written here (by hash): every string from a suite
or an engine reaches the page as JSON, read by `textContent`, so a pack holding `<script>`
shows as text and could not run even if it escaped.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from memeval.importers.sources import is_benchmark
from memeval.report.caveats import (
    composite_title,
    engine_models_note,
    infra_note,
    models_note,
    overbilling_note,
    partial_note,
)
from memeval.report.compare import RULE, CompareReport
from memeval.report.compare_markdown import move_rows
from memeval.report.intervals import RunIntervals, headline_titles, run_intervals
from memeval.report.numbers import DASH, kpi_number, number, sample
from memeval.report.numbers import ci as ci_text
from memeval.report.scorecard import COMPOSITE
from memeval.report.stats import Interval
from memeval.report.tables import (
    AccuracyRow,
    CostRow,
    accuracy_rows,
    cost_rows,
    latency_rows,
    scenario_name,
    status_counts,
    tag_rows,
    worst_scenarios,
)
from memeval.results import CaseResult, CaseStatus, Kpi, Phase, QueryLog, RunReport
from memeval.suites.fixture import WEIGHTS, Dimension
from memeval.summary import plural, readable_engine


@cache
def _asset(name: str) -> str:
    return (files("memeval.report") / "assets" / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def script_json(data: Any) -> str:
    """JSON that cannot end its `<script>` element early: `<`, `>` and `&` become escapes."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def page(title: str, subtitle: str, data: dict[str, Any]) -> str:
    css, js = _asset("report.css"), _asset("report.js")
    policy = (
        f"default-src 'none'; style-src '{_sha256(css)}'; script-src '{_sha256(js)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{css}</style></head>\n"
        f'<body><header class="top"><h1>{html.escape(title)}</h1>'
        f"<p>{html.escape(subtitle)}</p></header>\n"
        '<main id="app"><noscript>This report draws its charts with JavaScript; '
        "the same numbers are in report.md.</noscript></main>\n"
        f'<script type="application/json" id="memeval-data">{script_json(data)}</script>\n'
        f"<script>{js}</script>\n</body></html>\n"
    )


# ---- a run ------------------------------------------------------------------------------------


ONE_FILE = 2_000_000  # characters of probes and checks a report holds before it is paged
PAGE_ITEMS = 250  # probes and checks on one case page: a LongMemEval page is about 1.4 MB
FAILURES = 100  # failing probes and checks the summary page of a paged report shows


class HtmlPages(BaseModel):
    """A run's HTML report as files: `main` opens at once whatever the run's size; `pages`
    (named by their path relative to `main`, in order) hold every probe and check. A run small
    enough for one page has no `pages`, its `main` being `render_html`'s one file."""

    main: str
    pages: dict[str, str]


def pages_folder(main: Path) -> Path:
    """Where the case pages of the report written to `main` go: `report-cases/` beside
    `report.html`, so a folder of reports can be zipped, mailed and opened offline."""
    return main.with_name(f"{main.stem}-cases")


def render_html(report: RunReport, intervals: RunIntervals | None = None) -> str:
    """The report as one file, every probe and check in it: for stdout and the viewer, where
    there is no folder to put pages in. The page draws its table a view at a time, so it opens
    quickly at any size; only its file grows with the run."""
    ci = intervals or run_intervals(report)
    every = [item for case in report.cases for item in items(case)]
    return page(f"memeval run {report.label}", _subtitle(report), run_data(report, ci, every))


def render_pages(
    report: RunReport, main: str = "report.html", intervals: RunIntervals | None = None
) -> HtmlPages:
    """A summary page of bounded size (the numbers, the charts, the first failures and an
    index of pages) and the case pages it links, `PAGE_ITEMS` probes and checks each. Pages
    cut between cases; only a case larger than a page spans two. A run whose probes and
    checks fit in `ONE_FILE` (the built-in suites: under a megabyte) stays one page, every
    item a search away."""
    ci = intervals or run_intervals(report)
    paged = _paging(report, main)
    if paged is None:
        return HtmlPages(main=render_html(report, ci), pages={})
    chunks, index = paged
    failing = [
        item | {"href": entry["href"]}
        for chunk, entry in zip(chunks, index, strict=True)
        for item in chunk
        if not item["ok"]
    ]
    data = run_data(report, ci, failing[:FAILURES]) | {"failures": len(failing), "index": index}
    summary = page(f"memeval run {report.label}", _subtitle(report), data)
    pages = {
        entry["href"]: _case_page(report, main, index, n, chunk)
        for n, (entry, chunk) in enumerate(zip(index, chunks, strict=True))
    }
    return HtmlPages(main=summary, pages=pages)


def case_page(report: RunReport, main: str, name: str) -> str | None:
    """The case page `render_pages` would write as `name` beside `main`, alone and without
    the bootstrap the summary needs: what a server hands out a page at a time."""
    paged = _paging(report, main)
    if paged is None:
        return None
    chunks, index = paged
    hrefs = [entry["href"] for entry in index]
    if name not in hrefs:
        return None
    n = hrefs.index(name)
    return _case_page(report, main, index, n, chunks[n])


def _paging(
    report: RunReport, main: str
) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]] | None:
    """The pages' items and the summary's index of them; None for a run that fits one file."""
    chunks = _chunks(report.cases)
    if sum(_weight(item) for chunk in chunks for item in chunk) <= ONE_FILE:
        return None
    folder = pages_folder(Path(main)).name
    names = [f"{folder}/{n:03d}.html" for n in range(1, len(chunks) + 1)]
    return chunks, [_entry(name, chunk) for name, chunk in zip(names, chunks, strict=True)]


def _weight(item: dict[str, Any]) -> int:
    """About the characters an item adds to a page: its texts and a row's worth of keys."""
    return 200 + len(item["pack"]) + len(item["text"]) + sum(len(v) for _, v in item["facts"])


def _chunks(cases: list[CaseResult]) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = [[]]
    for case in cases:
        rows = items(case)
        if out[-1] and len(out[-1]) + len(rows) > PAGE_ITEMS:
            out.append([])
        out[-1] += rows
        while len(out[-1]) > PAGE_ITEMS:
            out.append(out[-1][PAGE_ITEMS:])
            out[-2] = out[-2][:PAGE_ITEMS]
    return out


def _entry(name: str, chunk: list[dict[str, Any]]) -> dict[str, Any]:
    cases = list(dict.fromkeys((item["case"], item["trial"]) for item in chunk))
    return {
        "href": name,
        "first": f"{cases[0][0]} #{cases[0][1]}",
        "last": f"{cases[-1][0]} #{cases[-1][1]}",
        "cases": len(cases),
        "items": len(chunk),
        "failing": sum(not item["ok"] for item in chunk),
    }


def _case_page(
    report: RunReport, main: str, index: list[dict[str, Any]], n: int, chunk: list[dict[str, Any]]
) -> str:
    """Links are relative to the page's own folder: the pages sit beside each other, the
    summary one level up."""

    def sibling(k: int) -> str | None:
        return Path(index[k]["href"]).name if 0 <= k < len(index) else None

    here = index[n]
    title = f"memeval run {report.label} · cases page {n + 1} of {len(index)}"
    subtitle = (
        f"{here['first']} – {here['last']} · {plural(here['cases'], 'case')} · "
        f"{here['items']} probes and checks, {here['failing']} failing"
    )
    data = {
        "kind": "cases",
        "page": n + 1,
        "pages": len(index),
        "summary": f"../{main}",
        "prev": sibling(n - 1),
        "next": sibling(n + 1),
        "items": chunk,
    }
    return page(title, subtitle, data)


def _subtitle(report: RunReport) -> str:
    notes = (
        models_note(report),
        engine_models_note(report),
        partial_note(report),
        infra_note(report),
        overbilling_note(report),
    )
    return (
        f"engine {readable_engine(report.engine)} · suite {report.suite}"
        + (f" ({report.subset})" if report.subset else "")
        + f" · run {report.run_id} · "
        f"started {report.started_at:%Y-%m-%d %H:%M} UTC · cases: {status_counts(report.cases)}"
        + (f" · {len(report.missing)} missing" if report.missing else "")
        + "".join(f" · {note}" for note in notes if note)
    )


def run_data(
    report: RunReport, ci: RunIntervals, shown_items: list[dict[str, Any]]
) -> dict[str, Any]:
    def interval(name: str) -> dict[str, Any]:
        return ci.intervals.get(name, Interval(value=None)).model_dump()

    def shown(name: str) -> dict[str, str]:
        """The strings the page prints, as the markdown prints them (see report.numbers)."""
        got = ci.intervals.get(name, Interval(value=None))
        return {"ci_shown": ci_text(got), "sample": sample(got, trials)}

    trials = len({c.trial for c in report.cases})
    headline = [
        {"name": name, "title": title, **interval(name), **shown(name)}
        | {"spread": spread.model_dump() if (spread := ci.trials.get(name)) else None}
        for name, title in headline_titles(
            ci, composite_title(report), report.partial, benchmark=is_benchmark(report.suite)
        )
    ]
    dimensions = [
        {"name": name, "weight": weight, **interval(name), **shown(name)}
        for name, weight in [*((d.value, WEIGHTS[d]) for d in Dimension), (COMPOSITE, 1.0)]
    ]
    accuracy, scenarios = worst_scenarios(accuracy_rows(report.cases))
    return {
        "kind": "run",
        "resamples": ci.resamples,
        "headline": headline,
        "dimensions": dimensions if any(c.kind == "fixture" for c in report.cases) else [],
        "heat": _heat(accuracy),
        "scenarios": scenarios,
        "latency": [r.model_dump() for r in latency_rows(report.cases)],
        "cost": [r.model_dump() | {"shown": _cost(r)} for r in cost_rows(report.cases)],
        "accuracy": [r.model_dump() for r in accuracy],
        "tags": [r.model_dump() for r in tag_rows(report.cases)],
        "kpis": [_kpi(k, report, ci) for k in report.overall_kpis],
        "items": shown_items,
    }


def _cost(row: CostRow) -> str:
    """E.g. "$0.0015 each · 40 correct"; unpriced, "– each": a dash, never a free "$0"."""
    if not row.correct:
        return "no correct answer"
    return f"{number(row.usd_per_correct, 'usd')} each · {row.correct} correct"


def _kpi(k: Kpi, report: RunReport, intervals: RunIntervals) -> dict[str, Any]:
    interval = intervals.intervals.get(k.name, Interval(value=None))
    shown = kpi_number(k, report.kpis)
    return k.model_dump() | {
        "low": interval.low,
        "high": interval.high,
        "shown": shown,
        "ci_shown": DASH if shown == DASH else ci_text(interval, k.unit),
    }


def _heat(rows: list[AccuracyRow]) -> dict[str, Any]:
    cols = [p.value for p in Phase]
    names = list(dict.fromkeys(r.name for r in rows))
    cell = {(r.name, r.phase): {"value": r.pack_hit, "n": r.probes} for r in rows}
    return {
        "cols": cols,
        "rows": [
            {"name": n, "cells": [cell.get((n, c), {"value": None, "n": 0}) for c in cols]}
            for n in names
        ],
    }


def _facts(pairs: dict[str, str]) -> list[list[str]]:
    return [[k, v] for k, v in pairs.items() if v]


def _flag(value: bool | None) -> str:
    return "" if value is None else str(value).lower()


def items(case: CaseResult) -> list[dict[str, Any]]:
    """The searchable table's rows: every probe and check, with everything needed to judge it."""
    base = {"case": scenario_name(case.case_id), "trial": case.trial}
    out: list[dict[str, Any]] = []
    if case.status is not CaseStatus.done:
        out.append(
            base
            | {"type": "case", "item": case.kind, "phase": "", "status": case.status.value}
            | {"ok": False, "text": case.error or "", "facts": [], "pack": ""}
        )
    for p in case.probes:
        facts = {
            "expected": ", ".join(p.expect),
            "stale": ", ".join(p.stale),
            "forbidden": ", ".join(p.forbidden),
            "leaked": ", ".join(p.leaked),
            "via · style": f"{p.via} · {p.style}" + ("" if p.scored else " · not scored"),
            "rank": "" if p.rank is None else str(p.rank),
            "fresh first": _flag(p.fresh_first),
            "extractive answer": p.extractive,
            "model answer": p.model_answer or "",
            "model right": _flag(p.model_ok),
            "captured": _flag(p.captured),
            "tags": ", ".join(p.tags),
            "abstain probe": "true" if p.abstain else "",
            "evidence found": f"{len(p.evidence_found)}/{len(p.evidence)}" if p.evidence else "",
            "evidence rank": "" if p.evidence_rank is None else str(p.evidence_rank),
            "F1": "" if p.extractive_f1 is None else f"{p.extractive_f1:.2f}",
            "judge": _flag(p.judge_ok) + (f" ({p.judge_note})" if p.judge_note else ""),
            "pack tokens": str(p.pack_tokens),
            "error": p.error or "",
        }
        out.append(
            base
            | {"type": "probe", "item": p.probe, "phase": p.phase.value, "status": p.status.value}
            | {"ok": (p.hit or not p.scored) and not p.leaked, "text": p.question}
            | {"facts": _facts(facts), "pack": p.pack}
        )
    queries = {q.query: q for q in case.queries}
    for ch in case.checks:
        asked = queries.get(ch.query) or QueryLog(query=ch.query, text="")
        facts = {
            "check": f"{ch.kind}: {ch.value}",
            "detail": ch.detail,
            "as of": "" if asked.as_of is None else asked.as_of.isoformat(),
            "answer": asked.answer or "",
            "abstained": "true" if asked.abstained else "",
            "conflicts reported": str(asked.conflicts) if asked.text else "",
            "model answer": asked.model_answer or "",
            "model right": _flag(asked.model_ok),
        }
        out.append(
            base
            | {
                "type": "check",
                "item": f"query {ch.query} · {ch.kind}",
                "phase": case.dimension or "",
            }
            | {"status": ch.status.value, "ok": ch.ok, "text": asked.text}
            | {"facts": _facts(facts), "pack": "\n".join(f"- {h}" for h in asked.hits)}
        )
    return out


# ---- a comparison -----------------------------------------------------------------------------


def render_compare_html(report: CompareReport) -> str:
    subtitle = (
        f"grouped by {report.by.value} · baseline {report.baseline} · "
        f"{plural(len(report.common), 'case')} in common · {report.resamples} resamples"
    )
    data = report.model_dump(mode="json", exclude={"table"})
    for dumped, comparison in zip(data["comparisons"], report.comparisons, strict=True):
        dumped["verdict"] = comparison.verdict
        dumped["headline"] = comparison.headline
        dumped["rows"] = [r._asdict() for r in move_rows(comparison)]
    rule = f"{RULE} {report.resamples} resamples."
    return page("memeval compare", subtitle, {"kind": "compare", "rule": rule, **data})
