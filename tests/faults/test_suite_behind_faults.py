"""The suite through `--engine http` behind the fault-injecting proxy scores exactly as it does
clean: 20% 5xx, 10% 429 with Retry-After and 5% timeouts (half of the 5xx and timeouts after
the engine handled the request), and the first response of 10% of the writes dropped after
they were stored. A representative subset keeps it short: the scenario with the most tool
turns, the planted conflicts, the two-tenant leak checks, and one fixture of each dimension
(the full suite, with one-second timeouts and Retry-After, is
`python -m benchmarks.fault_injection`). The clean run is the same cases on the embedded
reference engine, which a served one matches exactly (`tests/adapters/test_http_engine.py`)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.fault_injection import (
    differences,
    run_suite,
    scores,
    served_reference,
    stored_writes,
)
from memeval.engines.reference import ReferenceEngine
from memeval.results import RunReport
from memeval.runner import RunOptions, run_case
from memeval.runner.context import sub_tenant
from memeval.suites.catalog import resolve
from memeval.suites.scenario import Scenario
from memeval.summary import build_report
from memeval.testing.faultproxy import Fault, FaultPlan, FaultProxy

TIMEOUT = 0.5
SUBSET = (
    "lifecycle/tool_heavy",
    "lifecycle/conflicts",
    "lifecycle/isolation",
    "dimensions/temporal/card_limit_after_changes",
    "dimensions/conflict/supplier_iban_correction",
    "dimensions/multihop/building_via_department",
    "dimensions/abstention/retracted_bonus_pool",
    "dimensions/provenance/churn_rate_source",
)


async def clean_run() -> tuple[RunReport, dict[str, int]]:
    """The subset on the embedded engine: its report, and the writes it holds per tenant."""
    cases = [c for c in (x.case for x in resolve("all").cases) if c.id in SUBSET]
    engine = ReferenceEngine()
    options = RunOptions(keep=True)
    results = await asyncio.gather(
        *(run_case(c, engine, run_id="clean", options=options) for c in cases)
    )
    now = datetime.now(UTC)
    report = build_report(
        run_id="clean",
        label="clean",
        engine="reference",
        suite="all",
        started_at=now,
        finished_at=now,
        cases=list(results),
        planned=[f"{c.id}#0" for c in cases],
    )
    held = {
        f"{r.case_id}#{r.trial}/{name}": len(await engine.list(sub_tenant(r.tenant, name)))
        for c, r in zip(cases, results, strict=True)
        if isinstance(c, Scenario)
        for name in c.tenants
    }
    return report, held


def test_faults_change_no_score_and_are_counted(tmp_path: Path):
    clean, clean_writes = asyncio.run(clean_run())
    assert len(clean.cases) == len(SUBSET) and not clean.partial
    # Which request draws which fault depends on the order concurrent cases send them in: at
    # 2% timeouts the ~130 requests of this subset met none about one run in fifteen, at 5%
    # about one in a thousand, and the test asks that every kind of fault was met.
    plan = FaultPlan(
        seed=7, timeout=0.05, drop_first_writes=0.10, retry_after=0.2, hold=2 * TIMEOUT
    )
    with served_reference(tmp_path / "serve.log") as url:
        proxy = FaultProxy(url, plan)
        with proxy.running() as proxied:
            code, faulted, out = run_suite(
                proxied, tmp_path, "faulted", only=SUBSET, keep=True, timeout=TIMEOUT
            )
        faulted_writes = stored_writes(url, faulted, "all")

    tally = proxy.tally
    met = (Fault.server_error, Fault.throttled, Fault.timeout, Fault.dropped_write)
    assert all(tally.injected[f] > 0 for f in met), tally  # every kind of the plan was met
    assert tally.after_upstream > 0
    assert code == 0, out
    assert len(scores(clean)) > 30 and differences(clean, faulted) == []
    assert not faulted.partial
    assert faulted_writes == clean_writes  # every write stored once, lost responses included
    # Every injected fault was met by the client: counted as a retried request, inside an
    # attempt of a case then restarted on a fresh tenant (whose count is not kept), or by the
    # dispatcher's preflight, which runs outside every case (and gives up after two faults).
    assert faulted.infra_retries > 0
    assert faulted.infra_retries <= tally.faults
    if faulted.case_restarts == 0:
        assert tally.faults - faulted.infra_retries <= 1
    assert "infrastructure errors met" in out
    report_md = (tmp_path / "faulted" / "report.md").read_text()
    assert f"{faulted.infra_retries} requests retried" in report_md
