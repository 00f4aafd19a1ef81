"""Workers and the dispatcher serve Prometheus metrics during a real embedded run, and the
counters move."""

from __future__ import annotations

import re
import socket
import time

import httpx

from tests.farm.conftest import Farm, stop

SAMPLE = re.compile(r"^(?P<name>[a-z_]+)(?:\{(?P<labels>[^}]*)\})? (?P<value>\S+)$")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(port: int) -> tuple[dict[str, float], set[str]]:
    """Sum of every sample of each metric name, and every label value; empty while nothing
    serves yet."""
    try:
        body = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text
    except httpx.HTTPError:
        return {}, set()
    totals: dict[str, float] = {}
    values: set[str] = set()
    for line in body.splitlines():
        match = SAMPLE.match(line)
        if match:
            totals[match["name"]] = totals.get(match["name"], 0.0) + float(match["value"])
            values |= set(re.findall(r'="([^"]*)"', match["labels"] or ""))
    return totals, values


def test_worker_metrics_move_during_an_embedded_run(farm: Farm) -> None:
    port, dispatcher = free_port(), free_port()
    farm.env.update(
        MEMEVAL_METRICS_PORT=str(port),
        MEMEVAL_DISPATCHER_METRICS_PORT=str(dispatcher),
        MEMEVAL_TEST_DELAY="0.1",
    )
    proc = farm.start(
        "run", "--engine", "tests.farm.engines:Slow", "--dimension", "temporal",
        "--workers", "2", "--label", "metrics", "--out", str(farm.tmp / "out" / "metrics"),
    )  # fmt: skip
    seen: list[float] = []
    last: dict[str, float] = {}
    labels: set[str] = set()
    landed: list[float] = []
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            sample, values = scrape(port)
            if sample:
                last, labels = sample, labels | values
                seen.append(sample.get("memeval_cases_finished_total", 0.0))
            watching, _ = scrape(dispatcher)
            if "memeval_run_cases" in watching:
                landed.append(watching["memeval_run_cases"])
            time.sleep(0.2)
    finally:
        stop(proc)
    assert proc.returncode == 0, (farm.tmp / "run.log").read_text()[-3000:]
    moving = sorted(set(seen))
    assert len(moving) >= 2 and moving[-1] > moving[0], f"counter never moved: {seen}"
    assert last["memeval_cases_started_total"] >= last["memeval_cases_finished_total"] > 0
    assert last["memeval_engine_call_seconds_count"] > 0
    # The dispatcher's planned + landed gauges rise as cases land (10 planned: 10..20).
    assert landed and max(landed) > min(landed) and 10 <= min(landed) < max(landed) <= 20, landed
    # Bounded labels only: engine names, calls, statuses, the run id; never a case's text.
    assert "tests.farm.engines:Slow" in labels and {"store", "query", "done"} <= labels
    assert all(len(v) <= 64 and " " not in v for v in labels), sorted(labels)
