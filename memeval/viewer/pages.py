"""The viewer's pages, rendered on the server as plain HTML.

No template engine and no build step: each page is a few escaped f-strings, and the only
script (`static/viewer.js`) adds what a static page cannot do, live progress and selecting
runs to compare. Every text that came from a suite, an engine or a model is escaped, and the
page's policy lets nothing but our own files run.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from urllib.parse import urlencode

from memeval.report.numbers import DASH, pct
from memeval.report.numbers import usd as dollars
from memeval.results import CaseResult, CheckStatus, ProbeResult
from memeval.secrets import redact
from memeval.viewer.queries import CaseLine, Progress, RunFilter, RunSummary


def esc(value: object) -> str:
    return html.escape(redact(str(value)), quote=True)


def layout(title: str, body: str, *, live: str | None = None) -> str:
    data = f' data-live="{esc(live)}"' if live else ""
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{esc(title)} · memeval</title>"
        "<link rel='stylesheet' href='/static/viewer.css'></head>"
        f"<body{data}><header><a class='home' href='/'>memeval</a>"
        "<nav><a href='/'>runs</a><a href='/leaderboard'>leaderboard</a></nav></header>"
        f"<main><h1>{esc(title)}</h1>{body}</main>"
        "<script src='/static/viewer.js'></script></body></html>\n"
    )


def usd(value: float | None, cap: float | None = None) -> str:
    spent = DASH if value is None else dollars(value)
    return spent if cap is None else f"{spent} of {dollars(cap)}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return DASH
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def bar(run: RunSummary) -> str:
    """A native progress bar: no inline style for the page's policy to refuse."""
    return (
        f"<progress id='progress' max='{max(run.planned, 1)}' value='{run.landed}'>"
        f"{run.landed} of {run.planned}</progress>"
    )


# ---- the runs list -----------------------------------------------------------------------------


def runs_page(runs: list[RunSummary], total: int, f: RunFilter) -> str:
    fields = "".join(
        f"<label>{name} <input name='{name}' value='{esc(getattr(f, name) or '')}'></label>"
        for name in ("engine", "suite", "label")
    )
    statuses = "".join(
        f"<option{' selected' if f.status == s else ''}>{s}</option>"
        for s in ("", "running", "finished", "interrupted")
    )
    head = (
        "<tr><th></th><th>label</th><th>engine</th><th>suite</th><th>status</th>"
        "<th>cases</th><th>composite</th><th>cost</th><th>started</th><th>duration</th></tr>"
    )
    rows = "".join(_run_row(r) for r in runs)
    shown = f"{len(runs)} of {total} runs" + (f", page {f.page}" if total > f.per_page else "")
    return layout(
        "Runs",
        f"<form class='filters' method='get'>{fields}<label>status <select name='status'>"
        f"{statuses}</select></label><button>filter</button></form>"
        f"<form id='compare' method='get' action='/compare'><p class='count'>{shown} "
        "<button id='compare-button'>compare selected</button></p>"
        f"<table id='runs'><thead>{head}</thead><tbody>{rows}</tbody></table></form>"
        + _pages(f, total),
    )


def _run_row(r: RunSummary) -> str:
    subset = f" ({esc(r.subset)})" if r.subset else ""
    errors = f" <span class='bad'>{r.errored} errored</span>" if r.errored else ""
    return (
        f"<tr class='{r.status}'><td><input type='checkbox' name='run' value='{esc(r.id)}'></td>"
        f"<td><a href='/runs/{esc(r.id)}'>{esc(r.label)}</a></td><td>{esc(r.engine)}</td>"
        f"<td>{esc(r.suite)}{subset}</td><td>{r.status}</td>"
        f"<td>{r.landed}/{r.planned}{errors}</td><td>{pct(r.composite)}</td>"
        f"<td>{usd(r.usd)}</td><td>{r.started_at:%Y-%m-%d %H:%M}</td>"
        f"<td>{duration(r.duration_s)}</td></tr>"
    )


def _pages(f: RunFilter, total: int) -> str:
    last = max(1, -(-total // f.per_page))
    if last == 1:
        return ""
    base = {k: v for k, v in f.model_dump(exclude_none=True).items() if k != "page"}
    links = [
        f"<a href='/?{urlencode({**base, 'page': n})}'>{n}</a>" if n != f.page else f"<b>{n}</b>"
        for n in range(1, last + 1)
    ]
    return f"<p class='pages'>{' '.join(links)}</p>"


# ---- a run -------------------------------------------------------------------------------------


def run_page(run: RunSummary, cases: list[CaseLine], page: int, per_page: int) -> str:
    live = f"/api/runs/{run.id}/progress" if run.status == "running" else None
    facts = (
        f"<dl class='facts'><dt>engine</dt><dd>{esc(run.engine)}</dd><dt>suite</dt>"
        f"<dd>{esc(run.suite)}{' (' + esc(run.subset) + ')' if run.subset else ''}</dd>"
        f"<dt>status</dt><dd id='status'>{run.status}</dd>"
        f"<dt>cases</dt><dd id='landed'>{run.landed} of {run.planned}</dd>"
        f"<dt>composite</dt><dd id='composite'>{pct(run.composite)}</dd>"
        f"<dt>spent</dt><dd id='spent'>{usd(run.usd, run.budget_usd)}</dd>"
        f"<dt>started</dt><dd>{run.started_at:%Y-%m-%d %H:%M:%S} UTC</dd>"
        f"<dt>duration</dt><dd>{duration(run.duration_s)}</dd></dl>"
    )
    rows = "".join(
        f"<tr class='{c.status}'><td><a href='/runs/{esc(run.id)}/cases/{esc(c.case_id)}"
        f"?trial={c.trial}'>{esc(c.case_id)}</a>{'#' + str(c.trial) if c.trial else ''}</td>"
        f"<td>{esc(c.kind)}</td><td>{esc(c.dimension or DASH)}</td><td>{c.status}</td>"
        f"<td>{DASH if c.score is None else f'{c.score:.3f}'}</td>"
        f"<td class='why'>{esc(c.error or '')}</td></tr>"
        for c in cases
    )
    more = (
        f"<p class='pages'><a href='/runs/{esc(run.id)}?page={page + 1}'>next {per_page}</a></p>"
        if len(cases) == per_page
        else ""
    )
    report = (
        f"<p><a href='/runs/{esc(run.id)}/report'>the full report</a> (KPIs with intervals, "
        "dimensions, tags and charts)</p>"
        if run.landed
        else ""
    )
    return layout(
        f"Run {run.label}",
        f"{bar(run)}{facts}<section id='live'><h2>errors as they happen</h2>"
        "<ul id='errors'></ul><h2>waiting</h2><p id='waiting'></p></section>"
        f"{report}<h2>Cases, failures first</h2><table id='cases'><thead><tr><th>case</th>"
        "<th>kind</th><th>dimension</th><th>status</th><th>score</th><th>why</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>{more}",
        live=live,
    )


def progress_json(p: Progress) -> dict[str, object]:
    """What the live page redraws: the same numbers as the static parts, already formatted."""
    errors = p.recent_errors
    return {
        "status": p.run.status,
        "landed": p.run.landed,
        "planned": p.run.planned,
        "landed_text": f"{p.run.landed} of {p.run.planned}",
        "composite": pct(p.run.composite),
        "spent": usd(p.run.usd, p.run.budget_usd),
        "counts": p.counts,
        "errors": [f"{e.case_id}#{e.trial}: {redact(e.error or e.status)}" for e in errors],
        "waiting": p.waiting,
    }


# ---- a case ------------------------------------------------------------------------------------


def highlight(pack: str, marks: dict[str, Iterable[str]]) -> str:
    """The pack, escaped, with every expected (`hit`) and stale (`stale`) string marked."""
    spans: list[tuple[int, int, str]] = []
    for cls, needles in marks.items():
        for needle in needles:
            found = re.finditer(re.escape(needle), pack, re.I) if needle else ()
            spans += [(m.start(), m.end(), cls) for m in found]
    out, at = [], 0
    for start, end, cls in sorted(spans):
        if start < at:
            continue
        out += [esc(pack[at:start]), f"<mark class='{cls}'>{esc(pack[start:end])}</mark>"]
        at = end
    out.append(esc(pack[at:]))
    return "".join(out)


def _probe(p: ProbeResult) -> str:
    ok = p.hit and not p.leaked and p.status == CheckStatus.passed
    verdicts = ""
    if p.model_answer is not None:
        verdicts += f"<dt>model answer</dt><dd>{esc(p.model_answer)} ({_flag(p.model_ok)})</dd>"
    if p.judge_ok is not None:
        verdicts += f"<dt>judge</dt><dd>{_flag(p.judge_ok)} {esc(p.judge_note or '')}</dd>"
    evidence = ""
    if p.evidence:
        found = set(p.evidence_found)
        evidence = (
            "<dt>evidence</dt><dd>"
            + " ".join(
                f"<span class='{'hit' if e in found else 'miss'}'>{esc(e)}</span>"
                for e in p.evidence
            )
            + "</dd>"
        )
    return (
        f"<article class='probe {'ok' if ok else 'failed'}'><h3>{esc(p.probe)} "
        f"<small>{p.phase} · {esc(p.via)} · {esc(p.style)}</small></h3><dl>"
        f"<dt>question</dt><dd>{esc(p.question)}</dd>"
        f"<dt>expected</dt><dd>{esc(', '.join(p.expect) or DASH)}</dd>"
        + (f"<dt>stale</dt><dd>{esc(', '.join(p.stale))}</dd>" if p.stale else "")
        + f"<dt>hit</dt><dd>{_flag(p.hit)}{f' at unit {p.rank}' if p.rank else ''}</dd>"
        + (f"<dt>leaked</dt><dd class='bad'>{esc(', '.join(p.leaked))}</dd>" if p.leaked else "")
        + evidence
        + verdicts
        + (f"<dt>error</dt><dd class='bad'>{esc(p.error)}</dd>" if p.error else "")
        + "</dl><pre class='pack'>"
        + highlight(p.pack, {"hit": p.expect, "stale": p.stale})
        + "</pre></article>"
    )


def _flag(value: bool | None) -> str:
    if value is None:
        return DASH
    return "<b class='good'>yes</b>" if value else "<b class='bad'>no</b>"


def case_page(run: RunSummary, case: CaseResult, page: int, per_page: int) -> str:
    """Failed probes and checks first; a LoCoMo conversation holds hundreds of probes, each
    with its pack, so they come a page at a time."""
    ordered = sorted(case.probes, key=lambda p: (p.hit and not p.leaked, p.probe))
    probes = ordered[(page - 1) * per_page : page * per_page]
    link = f"/runs/{esc(run.id)}/cases/{esc(case.case_id)}?trial={case.trial}"
    more = (
        f"<p class='pages'>probes {(page - 1) * per_page + 1}–{(page - 1) * per_page + len(probes)}"
        f" of {len(ordered)} · <a href='{link}&amp;page={page + 1}'>next {per_page}</a></p>"
        if page * per_page < len(ordered)
        else ""
    )
    checks = sorted(case.checks, key=lambda c: (c.ok, c.query))
    queries = {q.query: q for q in case.queries}
    check_rows = "".join(
        f"<tr class='{'ok' if c.ok else 'failed'}'>"
        f"<td>{esc(queries[c.query].text if c.query in queries else c.query)}</td>"
        f"<td>{esc(c.kind)}</td><td>{esc(c.value)}</td><td>{c.status}</td>"
        f"<td>{esc(c.detail)}</td></tr>"
        for c in checks
    )
    body = (
        f"<p><a href='/runs/{esc(run.id)}'>run {esc(run.label)}</a> · {esc(case.kind)} · "
        f"status {case.status} · score {DASH if case.score is None else f'{case.score:.3f}'}"
        f" · tenant {esc(case.tenant)}</p>"
        + (f"<p class='bad'>{esc(case.error)}</p>" if case.error else "")
        + (
            "<h2>Checks, failed first</h2><table id='checks'><thead><tr><th>query</th>"
            f"<th>check</th><th>value</th><th>status</th><th>detail</th></tr></thead>"
            f"<tbody>{check_rows}</tbody></table>"
            if case.checks
            else ""
        )
        + ("<h2>Probes, failed first</h2>" + "".join(_probe(p) for p in probes) if probes else "")
        + more
    )
    return layout(f"Case {case.case_id}", body)


# ---- several runs ------------------------------------------------------------------------------


def leaderboard_page(boards: dict[str, list[RunSummary]]) -> str:
    sections = "".join(
        f"<h2>{esc(name)}</h2><table class='board'><thead><tr><th>#</th><th>engine</th>"
        "<th>composite</th><th>run</th><th>finished</th></tr></thead><tbody>"
        + "".join(
            f"<tr><td>{i}</td><td>{esc(r.engine)}</td><td>{pct(r.composite)}</td>"
            f"<td><a href='/runs/{esc(r.id)}'>{esc(r.label)}</a></td>"
            f"<td>{r.finished_at:%Y-%m-%d %H:%M}</td></tr>"
            for i, r in enumerate(rows, 1)
            if r.finished_at is not None
        )
        + "</tbody></table>"
        for name, rows in boards.items()
    )
    note = (
        "<p>One board per suite and settings; one row per engine, its latest finished run. "
        "Runs with other settings are on boards of their own.</p>"
    )
    return layout("Leaderboard", note + (sections or "<p>No finished run yet.</p>"))
