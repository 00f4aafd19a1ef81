"""A pool child killed mid-case: its case is redelivered and runs again on a fresh tenant, not
on the one the dead child half wrote."""

from __future__ import annotations

import os
import signal

from tests.farm.conftest import Farm, children, wait_for
from tests.farm.engines import SLOW


def test_a_case_redelivered_after_its_child_died_runs_on_a_fresh_tenant(farm: Farm) -> None:
    farm.env["MEMEVAL_TEST_DELAY"] = "0.3"
    run = farm.start("run", "--engine", SLOW, "--dimension", "temporal", "--label", "kill",
                     "--out", str(farm.tmp / "out" / "kill"), "--workers", "2")  # fmt: skip
    mark = wait_for(lambda: sorted(farm.marks.iterdir()), 60, "a case to start")[0]
    victim, _, tenant = mark.name.split("-", 2)
    assert int(victim) in children(run.pid)
    os.kill(int(victim), signal.SIGKILL)  # one pool process, mid-case
    assert run.wait(180) == 0, (farm.tmp / "run.log").read_text()
    half_written = tenant.rsplit("-a", 1)[0]
    rows = farm.rows("select case_id, status, tenant from case_results")
    (rerun,) = [(status, t) for _, status, t in rows if t.startswith(half_written + "-a")]
    assert rerun[0] == "done"
    assert rerun[1] != tenant and rerun[1].endswith("-a1"), (rerun, tenant)
