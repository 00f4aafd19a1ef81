"""The second fault campaign's injections change no score: malformed 200s (a cut JSON body, an
HTML page, an empty body), the statuses a CDN answers (408, 499, 520, 522, 524), half of them
after the engine had handled the request, and 503s asking for a Retry-After past what a call
waits (each pauses every worker and reruns its case). Before the transport's one rule, each
of these failed the check or probe it met and was scored as the engine's miss."""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchmarks.fault_injection import (
    MAX_WAIT,
    differences,
    run_suite,
    scores,
    served_reference,
    stored_writes,
)
from memeval.testing.faultproxy import Fault, FaultPlan, FaultProxy
from tests.faults.test_suite_behind_faults import SUBSET, TIMEOUT, clean_run

SECOND = (Fault.malformed, Fault.edge_status, Fault.long_wait)


def test_malformed_answers_edge_statuses_and_long_waits_change_no_score(tmp_path: Path):
    clean, clean_writes = asyncio.run(clean_run())
    plan = FaultPlan(
        seed=11,
        server_error=0,
        throttled=0,
        timeout=0,
        malformed=0.08,
        edge_status=0.08,
        long_wait=0.02,
        long_waits=2,
        long_retry_after=2 * MAX_WAIT,
        hold=2 * TIMEOUT,
    )
    with served_reference(tmp_path / "serve.log") as url:
        proxy = FaultProxy(url, plan)
        with proxy.running() as proxied:
            code, faulted, out = run_suite(
                proxied, tmp_path, "faulted", only=SUBSET, keep=True, timeout=TIMEOUT
            )
        faulted_writes = stored_writes(url, faulted, "all")
    tally = proxy.tally
    assert all(tally.injected[f] > 0 for f in SECOND), tally
    assert code == 0, out
    assert len(scores(clean)) > 30 and differences(clean, faulted) == []
    assert not faulted.partial and faulted_writes == clean_writes
    assert faulted.infra_retries > 0 and faulted.case_restarts >= 1  # the long waits
