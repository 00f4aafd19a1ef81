"""SIGTERM (`docker stop`, a CI timeout) stops a sweep the way Ctrl-C does: the runs are
marked interrupted, what landed is kept, and the command exits 130 without a traceback."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys

from tests.farm.conftest import ROOT, alive, children, wait_for
from tests.farm.engines import SLOW


def test_sigterm_interrupts_a_sweep_and_keeps_what_landed(server, tmp_path) -> None:
    db = tmp_path / "runs.db"

    def rows(sql: str) -> list[tuple]:
        if not db.exists():
            return []
        with sqlite3.connect(db) as connection:
            try:
                return connection.execute(sql).fetchall()
            except sqlite3.OperationalError:  # tables not made yet
                return []

    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMEVAL_")},
        "MEMEVAL_DATABASE_URL": f"sqlite:///{db}",
        "MEMEVAL_TEST_DELAY": "0.5",
        "PYTHONPATH": str(ROOT),
    }
    sweep = subprocess.Popen(
        [sys.executable, "-m", "memeval", "sweep", "--models", "test/cheap,test/dear",
         "--base-url", server.base_url, "--budget-usd", "5", "--suite", "dimensions",
         "--profile", f"slow: --engine {SLOW}", "--workers", "1"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: rows("select 1 from case_results"), 90, "a landed case")
        helpers = children(sweep.pid)
        sweep.send_signal(signal.SIGTERM)
        out, err = sweep.communicate(timeout=90)
    finally:
        sweep.kill()
    assert sweep.returncode == 130, out + err
    assert "Traceback" not in err
    assert sorted(rows("select status from runs")) == [("interrupted",), ("interrupted",)]
    assert rows("select count(*) from case_results where status = 'done'")[0][0] >= 1
    assert not [p for p in helpers if alive(p)], "SIGTERM left processes behind"
