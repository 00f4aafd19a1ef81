"""The fault proxy's lone surrogates, through a run of the suite subset the fault tests use:
every pack an engine answers carries half of a UTF-16 pair, and the composite
and every dimension score equal the clean run's. Before, the first such answer crashed the run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchmarks.fault_injection import differences, run_suite, scores, served_reference
from memeval.testing.faultproxy import Fault, FaultPlan, FaultProxy
from tests.faults.test_suite_behind_faults import SUBSET, TIMEOUT, clean_run


def test_lone_surrogates_in_every_answer_change_no_score(tmp_path: Path) -> None:
    clean, _ = asyncio.run(clean_run())
    plan = FaultPlan(seed=3, server_error=0, throttled=0, timeout=0, lone_surrogate=1.0)
    with served_reference(tmp_path / "serve.log") as url:
        proxy = FaultProxy(url, plan)
        with proxy.running() as proxied:
            code, faulted, out = run_suite(
                proxied, tmp_path, "cut", only=SUBSET, keep=True, timeout=TIMEOUT
            )
    assert proxy.tally.injected[Fault.lone_surrogate] > 20, proxy.tally
    assert code == 0 and "Traceback" not in out, out
    # The composite and every dimension equal the clean run's. Evidence recall, which reads the
    # pack's own text against what was written, sees the extra character: the answer did change.
    moved = [d for d in differences(clean, faulted) if d.startswith(("composite", "dimension/"))]
    assert len(scores(clean)) > 30 and moved == [], moved
    assert clean.composite == faulted.composite == 1.0
