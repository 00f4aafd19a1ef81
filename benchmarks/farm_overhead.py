"""What memeval's farm costs per case on top of Celery itself.

Run from the repository root: `python -m benchmarks.farm_overhead [--cases 2000] [--pool
prefork] [--concurrency 2]`. It needs the machine's Redis on 127.0.0.1:6379 and uses db 11
under a key prefix of its own, deleted afterwards.

Three runs of `--cases` no-op tasks as one chord on the same broker, each through a worker
node with the same pool, concurrency, prefetch 1, late acks and visibility timeout, started
and answering pings before the clock starts, and each timed until its chord callback ran:

- memeval: `run_on_farm` (what `memeval run` calls) dispatches tiny fixtures to `run_case`
  with `benchmarks.engines:NoopEngine`; each case stores its result in SQLite, and the
  callback folds the run and closes it in the store.
- raw, memeval's Celery settings: a task that does nothing, a callback that returns its
  clock, on an app configured by `make_app`: task events on, as Flower needs.
- raw, delivery settings only: the same tasks on plain Celery, events off.

The target, at most 1.3, is for memeval over raw Celery with the same settings; the ratio to
the plain run is printed too, to show what the events cost. Each path also prints the CPU
time per case of this (dispatching) process and of the worker node's whole process tree: on
a 2-core machine the paths are CPU-bound, so those say where the difference goes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

from celery import Celery, chord

from benchmarks.engines import (
    REDIS_HOST,
    REDIS_PORT,
    bench_env,
    drop_keys,
    machine_redis,
    timed_run,
    worker,
)
from memeval.store import open_store
from memeval.suites.catalog import resolve
from memeval_farm.config import make_app
from memeval_farm.settings import FarmSettings, load_settings

DB = 11
NOOP, DONE = "bench.noop", "bench.done"
TARGET = 1.3
LABELS = {
    "plain": "raw celery, delivery settings only",
    "twin": "raw celery, memeval's celery settings",
    "memeval": "memeval farm",
}
FIXTURE = """\
kind: fixture
dimension: abstention
name: noop_{i}
title: Nothing {i}
tests: never_stored
assertions:
  - {{id: a1, text: Fact {i}., source: bench}}
queries:
  - text: What about {i}?
    checks:
      - abstain: true
"""


def raw_app(settings: FarmSettings, *, as_memeval: bool) -> Celery:
    """A no-op chord's app. `as_memeval`: memeval's own Celery configuration (task events
    for Flower and the progress bar, time limits), so the difference is memeval's code; else
    plain Celery with memeval's delivery settings only, so the difference is everything."""
    if as_memeval:
        app = make_app(settings)
    else:
        url = settings.broker_url
        app = Celery("raw", broker=url, backend=url)
        transport = {
            "visibility_timeout": settings.visibility,
            "global_keyprefix": settings.key_prefix,
        }
        app.conf.update(
            task_serializer="json",
            result_serializer="json",
            accept_content=["json"],
            task_acks_late=True,
            task_reject_on_worker_lost=True,
            worker_prefetch_multiplier=1,
            broker_transport_options=transport,
            result_backend_transport_options=transport,
        )
    app.conf.task_default_queue = "raw"

    def noop() -> None:
        """The header task: nothing at all."""

    def done(_results: list[None]) -> float:
        """The callback's clock, so both sides stop timing where the work ends."""
        return time.time()

    app.task(name=NOOP, ignore_result=True, shared=False)(noop)
    app.task(name=DONE, shared=False)(done)
    return app


# What `celery -A benchmarks.farm_overhead:twin|plain worker` loads, from the environment.
twin = raw_app(load_settings(), as_memeval=True)
plain = raw_app(load_settings(), as_memeval=False)


def time_raw(app: Celery, cases: int) -> float:
    """Polls the callback's stored result rather than `get()`, whose pub/sub wait on a
    prefixed Redis stalls for minutes after a large chord (memeval never calls it either)."""
    started = time.time()
    result = chord([app.signature(NOOP) for _ in range(cases)], app.signature(DONE)).apply_async()
    deadline = time.monotonic() + 600
    while not result.ready():
        if time.monotonic() > deadline:
            sys.exit("the raw chord did not finish within 600 s")
        time.sleep(0.05)
    return float(result.result) - started


def generate(folder: Path, cases: int) -> Path:
    """One YAML file of `cases` one-assertion, one-check fixtures, as a user suite."""
    path = folder / "cases" / "noop.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("---\n".join(FIXTURE.format(i=i) for i in range(cases)))
    return path.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--pool", choices=("prefork", "threads"), default="prefork")
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()

    client = machine_redis(DB)
    namespace = f"bench-overhead-{uuid.uuid4().hex[:8]}"
    url = f"redis://{REDIS_HOST}:{REDIS_PORT}/{DB}"
    with tempfile.TemporaryDirectory(prefix="memeval-bench-") as tmp:
        folder = Path(tmp)
        database = f"sqlite:///{folder / 'memeval.db'}"
        env = bench_env(
            MEMEVAL_BROKER_URL=url, MEMEVAL_NAMESPACE=namespace, MEMEVAL_DATABASE_URL=database
        )
        settings = FarmSettings(broker_url=url, namespace=namespace)
        cases = [located.case for located in resolve(str(generate(folder, args.cases))).cases]
        shape = {"pool": args.pool, "concurrency": args.concurrency, "env": env}
        walls: dict[str, float] = {}
        cpu: dict[str, tuple[float, float]] = {}  # (this process, the worker node) per path
        try:
            for name in ("plain", "twin"):
                app = raw_app(settings, as_memeval=name == "twin")
                target = f"benchmarks.farm_overhead:{name}"
                with worker(app, target, log=folder / f"{name}.log", **shape) as node_cpu:
                    here, there = time.process_time(), node_cpu()
                    walls[name] = time_raw(app, args.cases)
                    cpu[name] = (time.process_time() - here, node_cpu() - there)
            farm = make_app(settings)
            with worker(farm, "memeval_farm.app", log=folder / "memeval.log", **shape) as node_cpu:
                here, there = time.process_time(), node_cpu()
                walls["memeval"], report = timed_run(
                    farm, settings, open_store(database), "benchmarks.engines:NoopEngine", cases
                )
                cpu["memeval"] = (time.process_time() - here, node_cpu() - there)
        finally:
            drop_keys(client, f"{namespace}:")
    done = sum(case.status.value == "done" for case in report.cases)
    print(f"{args.cases} no-op cases, {args.pool} pool x {args.concurrency}, {done} done")
    for name, label in LABELS.items():
        dispatcher, node = (1000 * c / args.cases for c in cpu[name])
        print(
            f"{label:<38} {walls[name]:7.2f} s  {1000 * walls[name] / args.cases:5.2f} ms/case"
            f"   cpu/case: dispatcher {dispatcher:4.2f} ms, worker node {node:4.2f} ms"
        )
    ratio = walls["memeval"] / walls["twin"]
    verdict = "ok" if ratio <= TARGET else "MISS"
    print(
        f"{'ratio to raw, same celery settings':<38} {ratio:7.2f}    target <= {TARGET}  {verdict}"
    )
    print(f"{'ratio to raw, delivery settings only':<38} {walls['memeval'] / walls['plain']:7.2f}")


if __name__ == "__main__":
    main()
