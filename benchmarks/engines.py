"""Engines and helpers the farm benchmarks share.

The engines answer nothing useful on purpose: a benchmark of the farm must measure the farm,
so `NoopEngine` costs nothing and `SleepEngine` costs exactly its sleep, never the reference
engine's CPU. Workers import this module by the engine reference
(`benchmarks.engines:NoopEngine`), so run the benchmarks from the repository root.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

import redis
from celery import Celery
from rich.console import Console

from memeval.engines.base import Engine
from memeval.engines.types import (
    Assertion,
    BeliefReport,
    Capability,
    ConflictReport,
    Derived,
    MemoryItem,
    Pack,
    QueryResult,
    Turn,
    TurnContext,
)
from memeval.evaluation.jobs import CaseJob, planned
from memeval.evaluation.planning import new_run_id
from memeval.report.stored import fold_run as load_report
from memeval.report.stored import require_run
from memeval.results import RunReport
from memeval.runner import RunOptions
from memeval.store import RunStatus, Store
from memeval.suites.loader import Case
from memeval_farm.farm import run_on_farm
from memeval_farm.settings import FarmSettings

ROOT = Path(__file__).resolve().parents[1]
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
SLEEP_ENV = "MEMEVAL_BENCH_SLEEP_MS"
START_TIMEOUT = 60.0
_EMPTY = Pack(markdown="# memory\n")


class NoopEngine(Engine):
    """Both faces, every call free. It still counts the writes per tenant, so a scenario's
    settle step (`list` until every write is visible) ends at once instead of timing out."""

    name = "bench-noop"
    capabilities = frozenset(
        {
            Capability.store,
            Capability.query_at,
            Capability.conflicts,
            Capability.lifecycle,
            Capability.context_doc,
            Capability.beliefs,
            Capability.inspect,
        }
    )

    def __init__(self) -> None:
        self._writes: dict[str, list[str]] = {}

    async def call(self) -> None:
        """Where every engine method spends its time: nothing here."""

    def _write(self, tenant: str, item_id: str) -> str:
        self._writes.setdefault(tenant, []).append(item_id)
        return item_id

    async def store(self, tenant: str, assertion: Assertion) -> None:
        await self.call()
        self._write(tenant, assertion.id)

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        await self.call()
        return QueryResult()

    async def query_at(self, tenant: str, text: str, as_of: datetime, k: int = 5) -> QueryResult:
        await self.call()
        return QueryResult()

    async def conflicts(self, tenant: str, assertion_id: str) -> list[ConflictReport]:
        await self.call()
        return []

    async def reset(self, tenant: str) -> None:
        await self.call()
        self._writes.pop(tenant, None)

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        await self.call()
        return self._write(tenant, item.id)

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        await self.call()
        self._write(tenant, f"turn-{len(self._writes.get(tenant, ()))}")
        return _EMPTY

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        await self.call()
        return self._write(tenant, f"turn-{len(self._writes.get(tenant, ()))}")

    async def start_session(
        self,
        tenant: str,
        agent: str,
        thread: str | None,
        focus: str | None,
        at: datetime,
        question: str | None = None,
    ) -> Pack:
        await self.call()
        return _EMPTY

    async def recall_for_compaction(
        self, tenant: str, agent: str, thread: str, dropped: list[Turn]
    ) -> Pack:
        await self.call()
        return _EMPTY

    async def compile_context(
        self, tenant: str, agent: str, heading: str, at: datetime, question: str | None = None
    ) -> Pack:
        await self.call()
        return _EMPTY

    async def build_beliefs(self, tenant: str) -> BeliefReport:
        await self.call()
        return BeliefReport()

    async def list(self, tenant: str) -> list[str]:
        await self.call()
        return list(self._writes.get(tenant, ()))

    async def forget(self, tenant: str) -> None:
        await self.call()
        self._writes.pop(tenant, None)

    async def inspect(self, tenant: str) -> Derived:
        await self.call()
        return Derived()


class SleepEngine(NoopEngine):
    """Every call sleeps L ms (`MEMEVAL_BENCH_SLEEP_MS` in the worker's environment), like an
    engine behind a network hop, so a case's ideal time is exactly its calls × L."""

    name = "bench-sleep"

    def __init__(self) -> None:
        super().__init__()
        self.seconds = float(os.environ.get(SLEEP_ENV, "20")) / 1000

    async def call(self) -> None:
        await asyncio.sleep(self.seconds)


def bench_env(**extra: str) -> dict[str, str]:
    """This environment without any farm setting of the caller's, with the repository on the
    path so workers can import `benchmarks.engines`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEVAL_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env.update(extra)
    return env


def machine_redis(db: int) -> redis.Redis:
    """The machine's Redis, or a clear exit: the benchmarks need a real one."""
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.ConnectionError as exc:
        sys.exit(f"Redis is unreachable at {REDIS_HOST}:{REDIS_PORT} ({exc}); start redis-server")
    return client


def drop_keys(client: redis.Redis, prefix: str) -> None:
    for key in client.scan_iter(f"{prefix}*", count=1000):
        client.delete(key)


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by `pid` and every live descendant, from /proc:
    a benchmark on a shared machine reports where the time went, not only how long it took."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(stat.parent.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, _) in stats.items():
            if ppid == parent and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(stats[p][1] for p in tree if p in stats)


@contextlib.contextmanager
def worker(
    app: Celery,
    target: str,
    *,
    pool: str,
    concurrency: int,
    env: Mapping[str, str],
    log: Path,
    name: str = "bench",
) -> Iterator[Callable[[], float]]:
    """A `celery -A target worker` node, with the embedded farm's flags, for `app`'s queue;
    ready (it answers a ping) before this yields, so its start-up is never timed, and stopped
    with its whole process group after. It yields a reading of the node's CPU seconds. Nodes
    started side by side need distinct `name`s."""
    node = f"{name}-{os.getpid()}-{app.conf.task_default_queue}@localhost"
    argv = [
        sys.executable, "-m", "celery", "-A", target, "worker",
        "--pool", pool,
        "--concurrency", str(concurrency),
        "--queues", app.conf.task_default_queue,
        "--hostname", node,
        "--loglevel", "WARNING",
        "--without-gossip",
        "--without-mingle",
    ]  # fmt: skip
    with log.open("ab") as handle:
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not app.control.ping(destination=[node], timeout=0.5):
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the worker did not start:\n{log.read_text(errors='replace')[-3000:]}")
        yield lambda: tree_cpu_s(proc.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(15)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # pool children left in the group
        proc.wait()


def timed_run(
    app: Celery,
    settings: FarmSettings,
    store: Store,
    engine: str,
    cases: list[Case],
    options: RunOptions | None = None,
    after_check: bool = False,
) -> tuple[float, RunReport]:
    """One run through memeval's own driver (`run_on_farm`, as `memeval run` on a shared
    broker), timed from dispatch until the run was closed in the store (by its last case, or
    the chord callback): the closer's own clock, so the dispatcher's poll interval never
    counts. With `after_check` the clock starts once the fleet has answered the engine check,
    as the cases go out: the check is a fixed second or two per run, which a benchmark of
    throughput reports apart."""
    run_id = new_run_id()
    given = options or RunOptions()
    jobs = [CaseJob(run_id=run_id, engine=engine, case=c, trial=0, options=given) for c in cases]
    store.create_run(run_id=run_id, label=run_id, engine=engine, suite="bench",
                     planned=[planned(j.case, j.trial) for j in jobs])  # fmt: skip
    started = [datetime.now(UTC)]

    def dispatching(_url: str) -> None:
        if after_check:
            started[0] = datetime.now(UTC)

    run_on_farm(settings, app, store, run_id, jobs, workers=1, pool="threads",
                console=Console(quiet=True), verbose=False,
                before_dispatch=dispatching)  # fmt: skip
    deadline = time.monotonic() + 60
    # The status alone: reading the whole record (its plan parsed, its cases counted) fifty
    # times a second took a tenth of a core from the workers being measured.
    while store.run_status(run_id) is RunStatus.running:
        if time.monotonic() > deadline:
            sys.exit(f"neither the last case nor the chord callback closed run {run_id}")
        time.sleep(0.02)
    record = require_run(store, run_id)
    assert record.finished_at is not None
    return (record.finished_at - started[0]).total_seconds(), load_report(store, run_id)
