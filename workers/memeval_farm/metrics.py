"""Prometheus metrics of the farm: what workers did with cases, what engines and models cost.

Workers serve them on `MEMEVAL_METRICS_PORT` and a dispatching `memeval run` on
`MEMEVAL_DISPATCHER_METRICS_PORT`; neither serves anything when its variable is unset.

A prefork worker runs cases in child processes while its parent serves HTTP, so the metrics
use prometheus-client's multiprocess mode: every process writes its samples to files under
`PROMETHEUS_MULTIPROC_DIR`, and the server adds them up at scrape time. That directory must be
known before prometheus-client is first imported, so `prepare()` sets it (a fresh private
folder, unless the operator chose one) and this module imports the client only inside its
functions.

Labels are bounded and never secret: a run id, an engine's *name* (never its options, which
may hold a URL), a model name, an engine call, a case status. No case text ever becomes a label.
"""

from __future__ import annotations

import os
import tempfile
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from celery import Celery

    from memeval.results import CaseResult, ProbeResult, QueryLog

PORT_ENV = "MEMEVAL_METRICS_PORT"
DISPATCHER_PORT_ENV = "MEMEVAL_DISPATCHER_METRICS_PORT"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
PREFIX = "memeval"

# Engine calls take from well under a millisecond (in-process) to a minute (a hosted engine).
CALL_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60)
WAIT_BUCKETS = (0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


def port(env: str = PORT_ENV) -> int | None:
    value = os.environ.get(env, "").strip()
    return int(value) if value.isdigit() and 0 < int(value) < 65536 else None


def prepare(env: str = PORT_ENV) -> None:
    """Choose the samples folder before any process imports prometheus-client; children
    started or forked afterwards inherit it through the environment."""
    if port(env) is not None and not os.environ.get(MULTIPROC_ENV):
        os.environ[MULTIPROC_ENV] = tempfile.mkdtemp(prefix="memeval-metrics-")


def engine_label(reference: str) -> str:
    """`http?url=http://10.0.0.5:8080` is labelled `http`: options may hold hosts or paths."""
    return reference.split("?", 1)[0]


@cache
def worker_metrics() -> dict[str, Any]:
    from prometheus_client import Counter, Histogram

    return {
        "started": Counter(f"{PREFIX}_cases_started", "Cases a worker began.", ["run", "engine"]),
        "finished": Counter(
            f"{PREFIX}_cases_finished",
            "Cases a worker stored, by how they ended (done, error, lost, skipped_budget).",
            ["run", "engine", "status"],
        ),
        "infra": Counter(
            f"{PREFIX}_case_retries",
            "Case attempts given back to the queue because infrastructure failed.",
            ["run", "engine"],
        ),
        "call": Histogram(
            f"{PREFIX}_engine_call_seconds",
            "Latency of engine calls, by call (pre_turn, query, ingest...).",
            ["engine", "call"],
            buckets=CALL_BUCKETS,
        ),
        "model_calls": Counter(
            f"{PREFIX}_model_calls", "Answering-model calls made.", ["run", "model"]
        ),
        "model_tokens": Counter(
            f"{PREFIX}_model_tokens", "Prompt and completion tokens billed.", ["run", "model"]
        ),
        "model_spend": Counter(
            f"{PREFIX}_model_spend_micro_usd",
            "Micro-USD the answering model billed, against the run's budget.",
            ["run", "model"],
        ),
        "limiter_wait": Histogram(
            f"{PREFIX}_limiter_wait_seconds",
            "Time a call waited for the global rate limiter, by limited kind.",
            ["kind"],
            buckets=WAIT_BUCKETS,
        ),
    }


@cache
def dispatcher_metrics() -> dict[str, Any]:
    from prometheus_client import Gauge

    return {
        "queue": Gauge(
            f"{PREFIX}_queue_depth",
            "Cases waiting in the farm's queue, as the dispatcher last saw it.",
            ["queue"],
            multiprocess_mode="livemax",
        ),
        "cap": Gauge(
            f"{PREFIX}_budget_cap_micro_usd",
            "The run's budget cap, to draw the model spend against.",
            ["run"],
            multiprocess_mode="livemax",
        ),
        "cases": Gauge(
            f"{PREFIX}_run_cases",
            "A dispatched run's cases by state (planned, landed), as the dispatcher saw them.",
            ["run", "state"],
            multiprocess_mode="livemax",
        ),
    }


def dispatcher_saw(
    *, run_id: str, queue: str, depth: int, planned: int, landed: int, cap_micros: int | None
) -> None:
    """One look of the waiting dispatcher at its run: refreshed on every poll."""
    if not enabled():
        return
    metrics = dispatcher_metrics()
    metrics["queue"].labels(queue).set(depth)
    metrics["cases"].labels(run_id, "planned").set(planned)
    metrics["cases"].labels(run_id, "landed").set(landed)
    if cap_micros is not None:
        metrics["cap"].labels(run_id).set(cap_micros)


def install(app: Celery) -> None:
    """Serve from the worker node's main process, count every case attempt given back for a
    retry, and forget a pool child's live gauges when it exits, as multiprocess mode asks.
    `app` is unused, but installing is part of building it: signals are process-wide."""
    from celery.signals import task_retry, worker_init, worker_process_shutdown

    def on_init(**_: object) -> None:
        serve()

    def on_retry(request: Any = None, **_: object) -> None:
        args, kwargs = getattr(request, "args", None) or (), getattr(request, "kwargs", None)
        if args and isinstance(kwargs, dict) and "engine" in kwargs:
            case_retried(str(args[0]), str(kwargs["engine"]))

    def on_child_exit(pid: int | None = None, **_: object) -> None:
        if enabled():
            from prometheus_client import multiprocess

            multiprocess.mark_process_dead(pid or os.getpid())  # type: ignore[no-untyped-call]  # prometheus_client's gap

    worker_init.connect(on_init, weak=False)
    task_retry.connect(on_retry, weak=False)
    worker_process_shutdown.connect(on_child_exit, weak=False)


def enabled() -> bool:
    """Recording costs nothing when no process of the tree serves metrics."""
    return bool(os.environ.get(MULTIPROC_ENV))


def case_started(run_id: str, engine: str) -> None:
    if enabled():
        worker_metrics()["started"].labels(run_id, engine_label(engine)).inc()


def case_retried(run_id: str, engine: str) -> None:
    if enabled():
        worker_metrics()["infra"].labels(run_id, engine_label(engine)).inc()


def case_finished(result: CaseResult, model: str | None) -> None:
    """Everything a stored result says about cost and latency, recorded once per store."""
    if not enabled():
        return
    metrics = worker_metrics()
    engine = engine_label(result.engine)
    metrics["finished"].labels(result.run_id, engine, result.status.value).inc()
    for timing in result.timings:
        metrics["call"].labels(engine, timing.call).observe(timing.ms / 1000)
    asked: list[ProbeResult | QueryLog] = [*result.probes, *result.queries]
    answered = [(a.model_tokens, a.model_usd_micros) for a in asked if a.model_answer is not None]
    if model and answered:
        label = (result.run_id, model)
        metrics["model_calls"].labels(*label).inc(len(answered))
        metrics["model_tokens"].labels(*label).inc(sum(t for t, _ in answered))
        metrics["model_spend"].labels(*label).inc(sum(u for _, u in answered))


def limiter_waited(kind: str, seconds: float) -> None:
    if enabled():
        worker_metrics()["limiter_wait"].labels(kind).observe(seconds)


def serve_dispatcher() -> bool:
    """Serve the waiting dispatcher's metrics when `MEMEVAL_DISPATCHER_METRICS_PORT` is set;
    once per process, however many runs it drives."""
    if _SERVING:
        return True
    prepare(DISPATCHER_PORT_ENV)
    if serve(DISPATCHER_PORT_ENV):
        _SERVING.append(DISPATCHER_PORT_ENV)
    return bool(_SERVING)


_SERVING: list[str] = []


def serve(env: str = PORT_ENV) -> bool:
    """Serve this process tree's metrics on the port in `env`; False when none is set."""
    chosen = port(env)
    if chosen is None or not enabled():
        return False
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # prometheus_client's gap
    address = os.environ.get("MEMEVAL_METRICS_ADDRESS", "0.0.0.0")
    start_http_server(chosen, addr=address, registry=registry)
    return True
