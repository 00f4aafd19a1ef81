"""`memeval view`'s web app: runs, a run filling in live, a case's probes, compare, leaderboard.

It only reads the results store (SQLite or Postgres, the same `MEMEVAL_DATABASE_URL` every
command uses), so it works alike for embedded, fleet and `--detach` runs: whatever lands in the
store shows. A token, when set, is checked before anything else is read: a bearer header for
scripts, or `?token=` once in a browser, which leaves an HttpOnly cookie behind.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from memeval.report.compare import GroupBy, compare
from memeval.report.html import case_page, pages_folder, render_compare_html, render_pages
from memeval.report.stored import fold_run
from memeval.store import Store
from memeval.viewer import pages
from memeval.viewer.queries import (
    PER_PAGE,
    RunFilter,
    RunSummary,
    case_lines,
    case_result,
    get_run,
    leaderboard,
    list_runs,
    progress,
)

STATIC = Path(__file__).parent / "static"
COOKIE = "memeval_view"
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
"""Our pages run our own script and style only. The stored reports and compare pages carry
their own, stricter policy (hashes of their inline script and style) and are served as-is."""
LEADERBOARD_RUNS = 5000
REPORT = "report"  # the report's path under /runs/RUN_ID/, which its case pages link back to


def create_app(store: Store, token: str | None = None) -> FastAPI:
    app = FastAPI(title="memeval view", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.middleware("http")
    async def guard(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        if request.method not in ("GET", "HEAD"):
            return JSONResponse({"detail": "the viewer is read-only"}, status_code=405)
        if token is not None and not request.url.path.startswith("/static/"):
            given = request.query_params.get("token")
            if given is not None and hmac.compare_digest(given, token):
                back = RedirectResponse(request.url.remove_query_params("token"), 303)
                back.set_cookie(COOKIE, token, httponly=True, samesite="strict")
                return back
            if not _authorised(request, token):
                return JSONResponse(
                    {"detail": "this viewer needs its token: open it as /?token=TOKEN"},
                    status_code=401,
                )
        response = await call_next(request)
        if response.headers.get("content-type", "").startswith("text/html"):
            response.headers.setdefault("Content-Security-Policy", POLICY)
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    def run_or_404(run_id: str) -> RunSummary:
        run = get_run(store, run_id)
        if run is None:
            raise HTTPException(404, f"no run `{run_id}` in the store")
        return run

    @app.get("/", response_class=HTMLResponse)
    def runs(f: Annotated[RunFilter, Query()]) -> str:
        found, total = list_runs(store, f)
        return pages.runs_page(found, total, f)

    @app.get("/api/runs")
    def runs_json(f: Annotated[RunFilter, Query()]) -> dict[str, object]:
        found, total = list_runs(store, f)
        return {"total": total, "runs": [r.model_dump(mode="json") for r in found]}

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run(run_id: str, page: Annotated[int, Query(ge=1)] = 1) -> str:
        summary = run_or_404(run_id)
        return pages.run_page(summary, case_lines(store, run_id, page), page, PER_PAGE)

    @app.get("/api/runs/{run_id}/progress")
    def run_progress(run_id: str) -> dict[str, object]:
        summary = run_or_404(run_id)
        record = store.get_run(run_id)
        planned = [(p.case_id, p.trial) for p in record.planned] if record else []
        return pages.progress_json(progress(store, summary, planned))

    @app.get("/runs/{run_id}/report", response_class=HTMLResponse)
    def report(run_id: str) -> HTMLResponse:
        """The report as `memeval run` writes it: a large run's summary, its case pages
        served beside it, so the page stays small whatever the run's size."""
        run_or_404(run_id)
        return _own_policy(render_pages(fold_run(store, run_id), REPORT).main)

    @app.get("/runs/{run_id}/report-cases/{name}", response_class=HTMLResponse)
    def report_page(run_id: str, name: str) -> HTMLResponse:
        run_or_404(run_id)
        found = case_page(fold_run(store, run_id), REPORT, f"{pages_folder(Path(REPORT))}/{name}")
        if found is None:
            raise HTTPException(404, f"run `{run_id}`'s report has no case page `{name}`")
        return _own_policy(found)

    @app.get("/runs/{run_id}/cases/{case_id:path}", response_class=HTMLResponse)
    def case(
        run_id: str,
        case_id: str,
        trial: Annotated[int, Query(ge=0)] = 0,
        page: Annotated[int, Query(ge=1)] = 1,
    ) -> str:
        summary = run_or_404(run_id)
        result = case_result(store, run_id, case_id, trial)
        if result is None:
            raise HTTPException(404, f"run `{run_id}` has no result for `{case_id}#{trial}`")
        return pages.case_page(summary, result, page, PER_PAGE)

    @app.get("/compare", response_class=HTMLResponse)
    def compare_runs(run: Annotated[list[str], Query()]) -> HTMLResponse:
        if len(run) < 2:
            raise HTTPException(400, "select two runs or more to compare")
        for run_id in run:
            run_or_404(run_id)
        reports = [fold_run(store, r) for r in run]
        distinct = len({r.label for r in reports}) == len(reports)
        by = GroupBy.label if distinct else GroupBy.run  # as `memeval compare`, unless ambiguous
        return _own_policy(render_compare_html(compare(reports, by=by)))

    @app.get("/leaderboard", response_class=HTMLResponse)
    def board() -> str:
        found, _ = list_runs(store, RunFilter(per_page=LEADERBOARD_RUNS))
        return pages.leaderboard_page(leaderboard(found))

    return app


def _authorised(request: Request, token: str) -> bool:
    header = request.headers.get("authorization", "")
    bearer = header.removeprefix("Bearer ") if header.startswith("Bearer ") else None
    given = bearer or request.cookies.get(COOKIE)
    return given is not None and hmac.compare_digest(given, token)


def _own_policy(page: str) -> HTMLResponse:
    """A stored report's page keeps the policy in its own meta tag, not ours."""
    response = HTMLResponse(page)
    response.headers["Content-Security-Policy"] = "frame-ancestors 'self'"
    return response
