"""Faults must never be scored as memory failures: the same suite, clean and behind faults.

Starts `memeval serve --engine reference`, runs a suite on it through `--engine http` once
directly and once behind the fault-injecting proxy (`memeval.testing.faultproxy`: by default
10% 5xx, 5% 429 with Retry-After, 2% timeouts, 5% malformed 200s (a cut JSON body, an HTML
page, an empty body), 5% of the statuses a CDN answers (408, 499, 520, 522, 524), half of all
but the 429s after the engine had handled the request, 1% of 503s asking for a Retry-After
longer than the client waits (at most 3: each pauses every worker and reruns its case), plus
the response of the first attempt of 10% of the writes dropped after they were stored; about
a quarter of all requests fail), and prints what was injected and what held: the composite, every
dimension and every KPI but latency equal to the clean run's, writes stored once, and the
infrastructure errors the run met, counted apart from the score.

Run from the repository root: `python -m benchmarks.fault_injection [--suite all] [--seed 1]`.
Exits 1 when anything did not hold. `tests/faults/` drives the same pieces.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

import httpx

from benchmarks.engines import ROOT, bench_env
from memeval.report.caveats import infra_note
from memeval.results import RunReport
from memeval.runner.context import sub_tenant
from memeval.suites.catalog import resolve
from memeval.suites.scenario import Scenario
from memeval.testing.faultproxy import FaultPlan, FaultProxy

TOKEN = "fault-injection-token"
CLIENT_TIMEOUT = 1.0
MAX_WAIT = 1.0
"""The longest Retry-After the engine waits out in one call here; the long waits ask for
twice as long, so each one pauses every worker and reruns its case."""
"""The engine's per-request timeout in these runs: the proxy holds a timed-out request for
twice as long, and a short one keeps the 2% of timeouts from dominating the wall time."""
UNSCORED_GROUPS = frozenset({"latency"})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def served_reference(log: Path) -> Iterator[str]:
    """`memeval serve --engine reference` in a subprocess; yields its URL once it answers."""
    port = free_port()
    argv = [sys.executable, "-m", "memeval", "serve", "--port", str(port), "--token", TOKEN]
    with log.open("w") as handle:
        proc = subprocess.Popen(argv, cwd=ROOT, env=bench_env(), stdout=handle, stderr=handle)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/openapi.json", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"memeval serve did not start:\n{log.read_text()}") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(20)


def engine_ref(url: str, timeout: float = CLIENT_TIMEOUT) -> str:
    options = {"url": url, "timeout": timeout, "backoff": 0.05, "retry_after_max": MAX_WAIT}
    return "http?" + urlencode(options)


def run_suite(
    url: str,
    folder: Path,
    label: str,
    *,
    suite: str = "all",
    only: tuple[str, ...] = (),
    keep: bool = False,
    timeout: float = CLIENT_TIMEOUT,
) -> tuple[int, RunReport, str]:
    """`memeval run` on the embedded farm (`--only` each of `only`); its exit code, JSON report
    and output."""
    env = bench_env(
        MEMEVAL_DATABASE_URL=f"sqlite:///{folder / 'memeval.db'}",
        MEMEVAL_HTTP_TOKEN=TOKEN,
        MEMEVAL_RETRY_BACKOFF="0.2",
        MEMEVAL_QUIET_AFTER="2",
    )
    argv = [
        sys.executable,
        "-m",
        "memeval",
        "run",
        "--engine",
        engine_ref(url, timeout),
        "--suite",
        suite,
        "--label",
        label,
        "--out",
        str(folder / label),
        "--pool",
        "threads",
        "--workers",
        "8",
    ]
    done = subprocess.run(
        [*argv, *(["--keep"] if keep else []), *(f"--only={case}" for case in only)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    path = folder / label / "report.json"
    if not path.exists():
        raise RuntimeError(f"`memeval run` wrote no report (exit {done.returncode}):\n{done}")
    report = RunReport.model_validate(json.loads(path.read_text()))
    return done.returncode, report, done.stdout + done.stderr


def scores(report: RunReport) -> dict[str, float | None]:
    """Every number the run is judged on, latency aside: what faults must leave unchanged."""
    out: dict[str, float | None] = {"composite": report.composite}
    out |= {f"dimension/{d}": v for d, v in report.dimensions.items()}
    out |= {
        f"{k.group}/{k.name}": k.value
        for k in report.overall_kpis
        if k.group not in UNSCORED_GROUPS
    }
    return out


def differences(clean: RunReport, faulted: RunReport) -> list[str]:
    a, b = scores(clean), scores(faulted)
    return [
        f"{name}: {a.get(name)} clean, {b.get(name)} with faults"
        for name in a
        if a[name] != b.get(name)
    ]


def stored_writes(url: str, report: RunReport, suite: str) -> dict[str, int]:
    """How many writes the engine holds per scenario tenant, named without the run's id, so
    two runs of one suite compare tenant by tenant (run with `--keep`)."""
    scenarios = {c.id: c for c in (x.case for x in resolve(suite).cases) if isinstance(c, Scenario)}
    held: dict[str, int] = {}
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
        for case in report.cases:
            if case.case_id not in scenarios:
                continue
            for name in scenarios[case.case_id].tenants:
                listing = client.get(f"/v1/tenants/{sub_tenant(case.tenant, name)}/memories")
                listing.raise_for_status()
                held[f"{case.case_id}#{case.trial}/{name}"] = len(listing.json()["ids"])
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--drop-first-writes", type=float, default=0.10)
    parser.add_argument("--server-error", type=float, default=0.10)
    parser.add_argument("--throttled", type=float, default=0.05)
    parser.add_argument("--malformed", type=float, default=0.05)
    parser.add_argument("--edge-status", type=float, default=0.05)
    parser.add_argument("--long-wait", type=float, default=0.01)
    parser.add_argument("--lone-surrogate", type=float, default=0.0)
    args = parser.parse_args()
    plan = FaultPlan(
        seed=args.seed,
        server_error=args.server_error,
        throttled=args.throttled,
        drop_first_writes=args.drop_first_writes,
        malformed=args.malformed,
        edge_status=args.edge_status,
        long_wait=args.long_wait,
        lone_surrogate=args.lone_surrogate,
        long_retry_after=2 * MAX_WAIT,
        hold=2 * CLIENT_TIMEOUT,
    )
    with tempfile.TemporaryDirectory(prefix="memeval-faults-") as tmp:
        folder = Path(tmp)
        with served_reference(folder / "serve.log") as url:
            started = time.perf_counter()
            code, clean, _ = run_suite(url, folder, "clean", suite=args.suite, keep=True)
            clean_wall = time.perf_counter() - started
            proxy = FaultProxy(url, plan)
            with proxy.running() as proxied:
                started = time.perf_counter()
                faulted_code, faulted, output = run_suite(
                    proxied, folder, "faulted", suite=args.suite, keep=True
                )
                faulted_wall = time.perf_counter() - started
            clean_writes = stored_writes(url, clean, args.suite)
            faulted_writes = stored_writes(url, faulted, args.suite)
    print(f"suite {args.suite}: {len(clean.cases)} cases; plan {plan.model_dump()}")
    print(
        f"clean run: exit {code}, {clean_wall:.1f} s; with faults: exit {faulted_code}, "
        f"{faulted_wall:.1f} s"
    )
    print("\n".join(proxy.tally.lines()))
    print(infra_note(faulted) or "infrastructure errors met: none")
    for name in ("pre_turn_p50", "pre_turn_p95", "pre_turn_timeout_rate", "probe_p95"):
        a, b = (next(k.value for k in r.kpis if k.name == name) for r in (clean, faulted))
        print(f"latency {name}: {a} clean, {b} with faults (the attempt that answered)")
    held = True
    changed, total = differences(clean, faulted), len(scores(clean))
    print(f"scores equal to the clean run's: {total - len(changed)} of {total}")
    for line in changed:
        print(f"  DIFFERS {line}")
    held &= not changed and code == faulted_code == 0
    twice = {
        k: (clean_writes.get(k), n) for k, n in faulted_writes.items() if n != clean_writes.get(k)
    }
    print(
        f"writes held per tenant equal to the clean run's: {len(faulted_writes) - len(twice)} "
        f"of {len(faulted_writes)} tenants"
    )
    for tenant, (want, got) in sorted(twice.items()):
        print(f"  DIFFERS {tenant}: {want} clean, {got} with faults")
    held &= not twice
    if faulted_code != 0:
        print(output[-3000:])
    print("held" if held else "DID NOT HOLD")
    sys.exit(0 if held else 1)


if __name__ == "__main__":
    main()
