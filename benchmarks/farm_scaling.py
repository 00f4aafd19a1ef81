"""Whether the farm keeps slow engines busy: the full suites on a threads pool at growing
concurrency, against the best any scheduler could do.

Run from the repository root: `python -m benchmarks.farm_scaling [--sleep-ms 20]
[--concurrency 1 8 32]`. It needs the machine's Redis on 127.0.0.1:6379 and uses db 12 under
a key prefix of its own, deleted afterwards.

Every engine call sleeps L ms (`benchmarks.engines:SleepEngine`), as a remote engine waits on
its network, so a case's ideal time is its calls × L. For each concurrency C a warm
`--pool threads` worker node runs every built-in case once through `run_on_farm` (what
`memeval run` calls), timed from dispatch until the chord callback closed the run. The lower
bound is max(longest case, total calls × L / C), with calls counted exactly from the report:
each entry of a case's `timings` is one engine call. Efficiency is that bound over the wall
time; the target is at least 0.8 at C = 32.
"""

from __future__ import annotations

import argparse
import tempfile
import uuid
from pathlib import Path

from benchmarks.engines import (
    REDIS_HOST,
    REDIS_PORT,
    SLEEP_ENV,
    bench_env,
    drop_keys,
    machine_redis,
    timed_run,
    worker,
)
from memeval.store import open_store
from memeval.suites.catalog import resolve
from memeval_farm.config import make_app
from memeval_farm.settings import FarmSettings

DB = 12
TARGET = 0.8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sleep-ms", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    args = parser.parse_args()

    client = machine_redis(DB)
    namespace = f"bench-scaling-{uuid.uuid4().hex[:8]}"
    url = f"redis://{REDIS_HOST}:{REDIS_PORT}/{DB}"
    cases = [located.case for located in resolve("all").cases]
    step = args.sleep_ms / 1000
    print(f"{len(cases)} built-in cases, every engine call sleeps {args.sleep_ms:g} ms")
    print(
        f"{'C':>3} {'calls':>6} {'wall s':>7} {'bound s':>8} {'longest s':>10} {'efficiency':>10}"
    )
    with tempfile.TemporaryDirectory(prefix="memeval-bench-") as tmp:
        database = f"sqlite:///{Path(tmp) / 'memeval.db'}"
        env = bench_env(
            MEMEVAL_BROKER_URL=url,
            MEMEVAL_NAMESPACE=namespace,
            MEMEVAL_DATABASE_URL=database,
            **{SLEEP_ENV: f"{args.sleep_ms:g}"},
        )
        settings = FarmSettings(broker_url=url, namespace=namespace)
        app = make_app(settings)
        store = open_store(database)
        try:
            for concurrency in args.concurrency:
                log = Path(tmp) / f"worker-{concurrency}.log"
                with worker(app, "memeval_farm.app", pool="threads", concurrency=concurrency,
                            env=env, log=log):  # fmt: skip
                    wall, report = timed_run(
                        app, settings, store, "benchmarks.engines:SleepEngine", cases
                    )
                calls = [len(case.timings) for case in report.cases]
                undone = [case.case_id for case in report.cases if case.status.value != "done"]
                if undone or report.missing:
                    raise SystemExit(f"cases did not finish: {undone or report.missing}")
                longest = max(calls) * step
                bound = max(longest, sum(calls) * step / concurrency)
                efficiency = bound / wall
                verdict = "ok" if efficiency >= TARGET else "MISS"
                mark = f"  target >= {TARGET}  {verdict}" if concurrency == 32 else ""
                print(f"{concurrency:>3} {sum(calls):>6} {wall:>7.2f} {bound:>8.2f} "
                      f"{longest:>10.2f} {efficiency:>10.2f}{mark}")  # fmt: skip
        finally:
            drop_keys(client, f"{namespace}:")


if __name__ == "__main__":
    main()
