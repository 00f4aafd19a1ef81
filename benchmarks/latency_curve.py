"""Whether the farm keeps a latency-bound engine busy: LoCoMo-shaped cases on 4 worker
processes with a threads pool, at concurrency 1, 8, 32, 64 and 128, against the best any
scheduler could do; then the same at 64 under `--rate`, counting every engine call.

Run from the repository root: `python -m benchmarks.latency_curve [--latency-ms 50]
[--concurrency 1 8 32 64 128] [--rounds 4] [--via sleep|http] [--rate 300] [--explain]`. It
needs the machine's Redis (db 14, under a key prefix of its own, deleted afterwards) and
PostgreSQL on 127.0.0.1 (a throwaway database, dropped afterwards). `--explain` adds under each
row where its time went, from the cases' own start and finish times, and what a fold of the
run costs.

Every engine call takes L ms: `--via sleep` sleeps inside the worker (`LoggedSleepEngine`),
`--via http` sends it to `memeval serve --latency-ms L` over memeval's protocol. Each call is
logged by the process that makes it, so the calls are counted, not estimated. For concurrency
C, C / 4 threads run on each of 4 worker nodes (one node of one thread at C = 1) and the run
holds `rounds` x C generated conversations (`benchmarks.locomo_shaped`, all the same size);
the bound is max(longest case, calls x L / C), efficiency is the bound over the time from
dispatch to the last case landing (`eff`) or to the run's close (`eff*`). The target is 0.9 at
C = 64.

Under `--rate N` (engine=N/s) the run must take at least (calls - burst) / N seconds, every
planned call must be made exactly once, and no one-second window may hold more than N + burst
calls: the limiter admits no more than the rate, however many workers ask. The windows are
counted on the limiter's clock (each call logs when it was admitted, `throttle.ADMITTED`);
arrivals, a few milliseconds later each, are counted too, and may show one call more.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import heapq
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import httpx
from celery import Celery

from benchmarks import locomo_shaped
from benchmarks.engines import (
    REDIS_HOST,
    REDIS_PORT,
    ROOT,
    SLEEP_ENV,
    NoopEngine,
    SleepEngine,
    bench_env,
    drop_keys,
    machine_redis,
    timed_run,
    worker,
)
from memeval.llm.rates import parse_rate
from memeval.report.stored import fold_run
from memeval.results import RunReport
from memeval.runner import RunOptions
from memeval.runner.throttle import ADMITTED
from memeval.store import Store, open_store
from memeval.suites.catalog import resolve
from memeval.suites.loader import Case
from memeval_farm.config import make_app
from memeval_farm.settings import FarmSettings

DB = 14
NODES = 4
TARGET = 0.9
CALL_LOG_ENV = "MEMEVAL_BENCH_CALL_LOG"
TOKEN = "latency-curve-token"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


class LoggedSleepEngine(SleepEngine):
    """`SleepEngine` that appends the time of each call to a file of its process, under
    `MEMEVAL_BENCH_CALL_LOG`, so the benchmark counts what the engine really saw."""

    name = "bench-logged-sleep"

    def __init__(self) -> None:
        super().__init__()
        folder = Path(os.environ[CALL_LOG_ENV])
        self._log = (folder / f"{os.getpid()}-{uuid.uuid4().hex[:6]}").open("a", buffering=1)

    async def call(self) -> None:
        """Logs when the call arrived, and when the rate limiter admitted it (0 unlimited)."""
        self._log.write(f"{time.time():.6f} {ADMITTED.get() or 0:.6f}\n")
        await super().call()

    async def close(self) -> None:
        self._log.close()


class LoggedNoopEngine(NoopEngine):
    """What `memeval serve` wraps for `--via http`: free calls, each logged (the delay is the
    server's `--latency-ms`)."""

    name = "bench-logged-noop"

    def __init__(self) -> None:
        super().__init__()
        folder = Path(os.environ[CALL_LOG_ENV])
        self._log = (folder / f"{os.getpid()}-{uuid.uuid4().hex[:6]}").open("a", buffering=1)

    async def call(self) -> None:
        self._log.write(f"{time.time():.6f} 0\n")


class Counting(NoopEngine):
    calls = 0

    async def call(self) -> None:
        self.calls += 1


def calls_per_case(case: Case) -> int:
    """The engine calls one case makes, counted by running it in this process on a free engine."""
    import asyncio

    from memeval.runner import run_case

    engine = Counting()
    asyncio.run(run_case(case, engine, run_id="count", trial=0, attempt=0,
                         options=RunOptions(), answerer=None))  # fmt: skip
    return engine.calls


def logged_calls(folder: Path) -> tuple[list[float], list[float]]:
    """Every logged call's arrival time, and its admission time where the limiter gave one
    (in the worker, so not behind `memeval serve`), each sorted."""
    rows = [line.split() for f in folder.iterdir() for line in f.read_text().splitlines()]
    admitted = sorted(float(a) for _, a in rows if float(a))
    return sorted(float(t) for t, _ in rows), admitted


def where_it_went(report: RunReport, dispatched: datetime, concurrency: int, ideal: float) -> str:
    """Where a run's time went, from its cases' own start and finish times: how long after
    dispatch the first round started, how long a case took beside its ideal (calls x L), and
    how long a slot stood idle between two cases (a case takes the slot freed first)."""
    spans = sorted(
        (c.started_at, c.finished_at) for c in report.cases if c.started_at and c.finished_at
    )
    firsts = [(start - dispatched).total_seconds() for start, _ in spans[:concurrency]]
    took = sorted((end - start).total_seconds() for start, end in spans)
    free = [dispatched] * concurrency
    idle = []
    for start, end in spans:
        freed = heapq.heapreplace(free, end)
        idle.append(max(0.0, (start - freed).total_seconds()))
    between = idle[concurrency:]
    return (
        f"first round started {min(firsts):.2f}-{max(firsts):.2f} s after dispatch; a case took "
        f"{statistics.mean(took):.2f} s (ideal {ideal:.2f}, slowest {took[-1]:.2f}); idle "
        f"between cases {statistics.mean(between) if between else 0:.3f} s a case, "
        f"{sum(between):.1f} slot-s in all"
    )


def busiest_second(times: list[float]) -> int:
    return max((bisect.bisect_left(times, t + 1.0) - i for i, t in enumerate(times)), default=0)


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    import psycopg
    from psycopg import sql

    name = f"memeval_bench_{uuid.uuid4().hex[:10]}"
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        sys.exit(f"PostgreSQL is unreachable at {PG_ADMIN} ({exc}); start it")
    with admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
        finally:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)))  # fmt: skip


@contextlib.contextmanager
def served(latency_ms: float, env: dict[str, str], log: Path) -> Iterator[str]:
    """`memeval serve --latency-ms` around the logged free engine, on a free port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [sys.executable, "-m", "memeval", "serve", "--port", str(port),
            "--engine", "benchmarks.latency_curve:LoggedNoopEngine",
            "--latency-ms", f"{latency_ms:g}"]  # fmt: skip
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, env={**env, "MEMEVAL_SERVE_TOKEN": TOKEN},
                                stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{url}/openapi.json", timeout=1).status_code == 200:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"memeval serve did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64, 128])
    parser.add_argument("--rounds", type=int, default=4, help="cases per concurrent slot")
    parser.add_argument("--via", choices=["sleep", "http"], default="sleep")
    parser.add_argument("--rate", type=int, default=300, help="engine calls/s; 0: no rate run")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="under each row, where its time went (the cases' own times)",
    )
    args = parser.parse_args()

    client = machine_redis(DB)
    namespace = f"bench-latency-{uuid.uuid4().hex[:8]}"
    url = f"redis://{REDIS_HOST}:{REDIS_PORT}/{DB}"
    step = args.latency_ms / 1000
    with (tempfile.TemporaryDirectory(prefix="memeval-bench-") as tmp_name,
          postgres_database() as database):  # fmt: skip
        tmp = Path(tmp_name)
        most = args.rounds * max(args.concurrency)
        source = locomo_shaped.write(tmp / "locomo-shaped.json", most)
        with contextlib.redirect_stderr(None):
            every = [located.case for located in resolve(f"locomo:{source}").cases]
        per_case = calls_per_case(every[0])
        calls_log = tmp / "calls"
        env = bench_env(MEMEVAL_BROKER_URL=url, MEMEVAL_NAMESPACE=namespace,
                        MEMEVAL_DATABASE_URL=database, MEMEVAL_QUIET_AFTER="30",
                        MEMEVAL_HTTP_TOKEN=TOKEN, **{SLEEP_ENV: f"{args.latency_ms:g}",
                        CALL_LOG_ENV: str(calls_log)})  # fmt: skip
        settings = FarmSettings(broker_url=url, namespace=namespace)
        app = make_app(settings)
        store = open_store(database)
        print(f"LoCoMo-shaped cases of {per_case} engine calls, every call {args.latency_ms:g} ms "
              f"({args.via}), {NODES} worker processes, threads pool")  # fmt: skip
        print(f"{'C':>4} {'cases':>6} {'calls':>6} {'landed s':>8} {'wall s':>7} "
              f"{'bound s':>7} {'eff':>6} {'eff*':>6} {'CPU s':>6}")  # fmt: skip
        server = served(args.latency_ms, env, tmp / "serve.log") if args.via == "http" else None
        try:
            with server or contextlib.nullcontext() as engine_url:
                engine = (f"http?url={engine_url}" if engine_url
                          else "benchmarks.latency_curve:LoggedSleepEngine")  # fmt: skip
                plan = [(c, None) for c in args.concurrency]
                if args.rate:
                    plan.append((64, args.rate))  # one round: the rate, not the slots, binds
                for concurrency, rate in plan:
                    measure(app, settings, store, env, tmp, engine, every, per_case, step,
                            concurrency, rate, 1 if rate else args.rounds,
                            explain=args.explain)  # fmt: skip
        finally:
            drop_keys(client, f"{namespace}:")
            drop_keys(client, "memeval:rate:engine:")


def measure(
    app: Celery,
    settings: FarmSettings,
    store: Store,
    env: dict[str, str],
    tmp: Path,
    engine: str,
    every: list[Case],
    per_case: int,
    step: float,
    concurrency: int,
    rate: int | None,
    rounds: int,
    *,
    explain: bool = False,
) -> None:
    """One run at `concurrency`, printed as a row of the curve."""
    calls_log = Path(env[CALL_LOG_ENV])
    calls_log.mkdir(exist_ok=True)
    for old in calls_log.iterdir():
        old.unlink()
    cases = every[: rounds * concurrency]
    nodes = 1 if concurrency < NODES else NODES
    options = RunOptions(rates=[parse_rate(f"engine={rate}/s")]) if rate else None
    with contextlib.ExitStack() as stack:
        cpu = [stack.enter_context(worker(app, "memeval_farm.app", pool="threads",
                                          concurrency=concurrency // nodes, env=env,
                                          log=tmp / f"worker-{concurrency}-{n}.log",
                                          name=f"latency{n}"))
               for n in range(nodes)]  # fmt: skip
        before = sum(read() for read in cpu)
        wall, report = timed_run(app, settings, store, engine, cases, options, after_check=True)
        used = sum(read() for read in cpu) - before
    undone = [case.case_id for case in report.cases if case.status.value != "done"]
    if undone or report.missing:
        sys.exit(f"cases did not finish: {undone[:5] or report.missing[:5]}")
    times, admitted = logged_calls(calls_log)
    planned = per_case * len(cases)
    if len(times) != planned:
        sys.exit(f"the engine saw {len(times)} calls, {planned} were planned")
    assert report.finished_at is not None
    last = max(c.finished_at for c in report.cases if c.finished_at)
    landed = wall - (report.finished_at - last).total_seconds()
    longest = per_case * step
    bound = max(longest, planned * step / concurrency)
    mark = ""
    if rate:
        burst = parse_rate(f"engine={rate}/s").burst
        bound = max(bound, (planned - burst) / rate)
        # Judged by the limiter's own clock where the log has it: arrivals lag admissions by
        # a few ms each, so a one-second window of arrivals may hold a call more than any
        # window of admissions can.
        judged = admitted if len(admitted) == len(times) else times
        worst = busiest_second(judged)
        verdict = "exact" if worst <= rate + burst else "OVER"
        mark = (f"  --rate engine={rate}/s: busiest second {worst} by "
                f"{'admission' if judged is admitted else 'arrival'} (limit {rate + burst}) "
                f"{verdict}; {busiest_second(times)} by arrival")  # fmt: skip
    elif concurrency == 64:
        mark = f"  target >= {TARGET}: {'ok' if bound / landed >= TARGET else 'MISS'}"
    print(f"{concurrency:>4} {len(cases):>6} {planned:>6} {landed:>8.2f} {wall:>7.2f} "
          f"{bound:>7.2f} {bound / landed:>6.2f} {bound / wall:>6.2f} {used:>6.1f}{mark}",
          flush=True)  # fmt: skip
    if explain:
        dispatched = report.finished_at - timedelta(seconds=wall)
        clock, cpu_clock = time.perf_counter(), time.process_time()
        fold_run(store, report.run_id)  # what the closing case and the chord callback each do
        folded = f"{time.perf_counter() - clock:.2f} s ({time.process_time() - cpu_clock:.2f} CPU)"
        print(f"       {where_it_went(report, dispatched, concurrency, longest)}; "
              f"a fold of the run took {folded}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
