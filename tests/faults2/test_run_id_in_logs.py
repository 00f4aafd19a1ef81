"""A run whose output goes to a log (CI, nohup, a pipe) names itself before its cases land: a
dispatcher killed mid-run used to leave no run id in such a log, only on a terminal's bar."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from memeval.store import open_store

FARM_ENV = ("MEMEVAL_BROKER_URL", "MEMEVAL_RESULT_BACKEND", "MEMEVAL_REDIS_URL")
LINE = re.compile(r"^run (\S+): if it stops, `memeval run --resume (\S+)`$", re.M)


def test_a_killed_run_left_its_id_and_how_to_resume_it_in_its_log(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in FARM_ENV}
    env["MEMEVAL_DATABASE_URL"] = f"sqlite:///{tmp_path / 'runs.db'}"
    log = tmp_path / "run.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memeval", "run", "--in-process", "--suite", "dimensions",
             "--workers", "1", "--out", str(tmp_path / "out")],
            cwd=tmp_path, env=env, stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not LINE.search(log.read_text()) and proc.poll() is None:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)  # no handler runs: only what is already written
        finally:
            proc.kill()
            proc.wait(30)
    text = log.read_text()
    match = LINE.search(text)
    assert match is not None, text
    run_id = match.group(1)
    assert match.group(2) == run_id
    store = open_store(env["MEMEVAL_DATABASE_URL"])
    run = store.get_run(run_id)
    assert run is not None and run.status.value == "running"  # killed: nothing closed it
    assert len(store.case_results(run_id)) < 50, "the line came before the cases landed"
    resumed = subprocess.run(
        [sys.executable, "-m", "memeval", "run", "--resume", run_id, "--in-process",
         "--out", str(tmp_path / "out")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(store.case_results(run_id)) == 50
