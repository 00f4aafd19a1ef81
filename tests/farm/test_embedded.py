"""`memeval run` on the embedded farm: a private Redis and a local worker node per run."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
from pathlib import Path

import pytest

from memeval_farm.children import NODE_NAME
from tests.cli_here import run_cli_here
from tests.farm.conftest import (
    ROOT,
    Farm,
    alive,
    children,
    proc_file,
    process_name,
    stat,
    wait_for,
)
from tests.farm.engines import CRASHING, DOWN, SLOW

CASE_FILES = [
    "lifecycle/brain_lookup.yaml",
    "lifecycle/isolation.yaml",
    "dimensions/temporal/cfo_on_date.yaml",
    "dimensions/conflict/manager_exclusive_slot.yaml",
    "dimensions/abstention/never_stored_parking.yaml",
    "dimensions/multihop/building_via_department.yaml",
]


def user_suite(tmp: Path) -> Path:
    folder = tmp / "cases"
    for name in CASE_FILES:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "fixtures" / name, target)
    return folder


def scores(report: dict) -> dict[tuple[str, int], tuple]:
    return {
        (c["case_id"], c["trial"]): (
            c["status"],
            c["score"],
            [(ch["query"], ch["kind"], ch["status"]) for ch in c["checks"]],
            [(p["probe"], p["phase"], p["hit"]) for p in c["probes"]],
        )
        for c in report["cases"]
    }


def test_embedded_run_scores_like_the_runner_in_process(farm: Farm) -> None:
    suite = str(user_suite(farm.tmp))
    out = str(farm.tmp / "out")
    embedded = farm.run("run", "--suite", suite, "--label", "farm", "--out", f"{out}/farm",
                        "--trials", "2", "--workers", "2", "--verbose")  # fmt: skip
    assert embedded.returncode == 0, embedded.stdout + embedded.stderr
    direct = farm.run("run", "--suite", suite, "--label", "direct", "--out", f"{out}/direct",
                      "--trials", "2", "--in-process")  # fmt: skip
    assert direct.returncode == 0, direct.stdout + direct.stderr

    farmed, inproc = farm.report("farm"), farm.report("direct")
    assert len(farmed["cases"]) == 2 * len(CASE_FILES)
    assert scores(farmed) == scores(inproc)
    assert farmed["composite"] == inproc["composite"]
    assert farmed["dimensions"] == inproc["dimensions"]
    assert (farm.tmp / "out" / "farm" / "report.md").read_text().startswith("# memeval run")
    # --verbose printed each case as it landed; the store holds one finished run per command.
    assert len(re.findall(r"^(pass|FAIL) ", embedded.stdout, re.M)) >= 2 * len(CASE_FILES)
    assert sorted(farm.rows("select label, status from runs")) == [
        ("direct", "finished"),
        ("farm", "finished"),
    ]
    assert not _farm_processes(farm), "the embedded farm left processes behind"


def test_a_crashing_case_is_an_error_and_the_run_completes(farm: Farm) -> None:
    farm.env.update(MEMEVAL_RETRIES="1", MEMEVAL_RETRY_BACKOFF="0.1")
    crash = farm.run("run", "--engine", CRASHING, "--only", "cfo_on_date",
                     "--only", "never_stored_parking", "--label", "crash",
                     "--out", str(farm.tmp / "out" / "crash"), "--workers", "1")  # fmt: skip
    assert crash.returncode == 1, crash.stdout + crash.stderr
    assert "resume with `memeval run --resume" in crash.stdout
    cases = farm.report("crash")["cases"]
    assert [c["status"] for c in cases] == ["error", "error"]
    assert all("RuntimeError: engine bug" in c["error"] for c in cases)

    down = farm.run("run", "--engine", DOWN, "--only", "cfo_on_date", "--label", "down",
                    "--out", str(farm.tmp / "out" / "down"), "--workers", "2",
                    "--pool", "threads")  # fmt: skip
    assert down.returncode == 1, down.stdout + down.stderr
    (case,) = farm.report("down")["cases"]
    assert case["status"] == "error"
    assert case["error"] == "engine unavailable after 2 attempts: connection refused"
    assert farm.rows("select status from runs where label = 'down'") == [("finished",)]


def test_a_crashing_case_in_process_is_an_error_as_on_the_farm(farm: Farm) -> None:
    out = farm.tmp / "out" / "here"
    store = {"MEMEVAL_DATABASE_URL": farm.env["MEMEVAL_DATABASE_URL"]}
    crash = run_cli_here("run", "--in-process", "--engine", CRASHING, "--only", "cfo_on_date",
                         "--only", "never_stored_parking", "--out", str(out),
                         env=store)  # fmt: skip
    assert crash.returncode == 1, crash.stdout + crash.stderr
    assert "Traceback" not in crash.stdout + crash.stderr
    assert "resume with `memeval run --resume" in crash.stdout
    cases = json.loads((out / "report.json").read_text())["cases"]
    assert [c["status"] for c in cases] == ["error", "error"]
    assert all(c["error"] == "RuntimeError: engine bug" for c in cases)


def test_a_killed_worker_process_has_its_case_redelivered(farm: Farm) -> None:
    farm.env["MEMEVAL_TEST_DELAY"] = "0.3"
    run = farm.start("run", "--engine", SLOW, "--dimension", "temporal", "--label", "kill",
                     "--out", str(farm.tmp / "out" / "kill"), "--workers", "2")  # fmt: skip
    mark = wait_for(lambda: sorted(farm.marks.iterdir()), 60, "a case to start")[0]
    victim = int(mark.name.split("-")[0])
    assert victim in children(run.pid)
    os.kill(victim, signal.SIGKILL)  # one pool process, mid-case

    assert run.wait(120) == 0, (farm.tmp / "run.log").read_text()
    (planned,) = farm.rows("select planned_count from runs")[0]
    rows = farm.rows("select case_id, trial, status from case_results")
    assert len(rows) == planned == len({(case, trial) for case, trial, _ in rows})
    assert {status for _, _, status in rows} == {"done"}
    assert not _farm_processes(farm)


def test_a_dead_worker_node_loses_its_cases_and_resume_runs_only_those(farm: Farm) -> None:
    farm.env["MEMEVAL_TEST_DELAY"] = "0.3"
    run = farm.start("run", "--engine", SLOW, "--dimension", "abstention", "--label",
                     "lost", "--out", str(farm.tmp / "out" / "lost"), "--workers", "2")  # fmt: skip
    wait_for(farm.has_results, 60, "a result")
    nodes = [p for p in children(run.pid) if process_name(p) == NODE_NAME]
    node = next(p for p in nodes if _parent(p) == run.pid)
    os.kill(node, signal.SIGKILL)  # the whole node, so nothing can requeue its cases

    assert run.wait(60) == 1, (farm.tmp / "run.log").read_text()
    log = (farm.tmp / "run.log").read_text()
    assert re.search(r"\d+ cases? lost", log) and "memeval run --resume" in log
    (run_id, planned) = farm.rows("select id, planned_count from runs")[0]
    before = dict(farm.rows("select case_id, status from case_results"))
    assert len(before) == planned and "lost" in before.values()
    done_before = {c for c, s in before.items() if s == "done"}
    updated_before = dict(farm.rows("select case_id, updated_at from case_results"))
    assert not _farm_processes(farm)

    resume = farm.run("run", "--resume", run_id, "--out", str(farm.tmp / "out" / "lost"))
    assert resume.returncode == 0, resume.stdout + resume.stderr
    assert f"{planned - len(done_before)} of {planned} cases to run" in resume.stdout
    after = dict(farm.rows("select case_id, status from case_results"))
    assert set(after.values()) == {"done"} and len(after) == planned
    updated_after = dict(farm.rows("select case_id, updated_at from case_results"))
    assert all(updated_after[c] == updated_before[c] for c in done_before)  # not run again
    report = farm.report("lost")
    assert len(report["cases"]) == planned and not report["missing"]  # the whole run


def test_a_forked_node_and_its_pool_die_with_a_run_killed_outright(farm: Farm) -> None:
    farm.env["MEMEVAL_TEST_DELAY"] = "0.3"
    run = farm.start("run", "--engine", SLOW, "--dimension", "abstention", "--workers", "2",
                     "--out", str(farm.tmp / "out"))  # fmt: skip
    wait_for(farm.has_results, 60, "a result")
    started = children(run.pid)
    nodes = [p for p in started if process_name(p) == NODE_NAME]
    assert len(nodes) == 3  # the node and its pool of two
    assert [p for p in started if b"redis-server" in proc_file(p, "cmdline")]
    # forked from the run, not a fresh interpreter that imports everything again
    assert {proc_file(p, "cmdline") for p in nodes} == {proc_file(run.pid, "cmdline")}
    run.kill()  # no handler runs: only the kernel can stop what it started
    run.wait()
    wait_for(lambda: not [p for p in started if alive(p)], 30, "the farm's processes to end")


def test_ctrl_c_keeps_finished_cases_and_writes_a_partial_report(farm: Farm) -> None:
    farm.env["MEMEVAL_TEST_DELAY"] = "0.5"
    run = farm.start("run", "--engine", SLOW, "--dimension", "conflict", "--label", "int",
                     "--out", str(farm.tmp / "out" / "int"), "--workers", "1")  # fmt: skip
    wait_for(farm.has_results, 60, "a result")
    helpers = children(run.pid)
    assert helpers
    run.send_signal(signal.SIGINT)

    assert run.wait(60) == 130, (farm.tmp / "run.log").read_text()
    assert "memeval run --resume" in (farm.tmp / "run.log").read_text()
    report = farm.report("int")
    done = [c for c in report["cases"] if c["status"] == "done"]
    assert done and report["missing"]
    assert farm.rows("select status from runs") == [("interrupted",)]
    assert not [p for p in helpers if alive(p)], "Ctrl-C left processes behind"


def test_bad_input_is_one_line_and_exit_2(farm: Farm, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each is refused before any farm starts, so all but the first run in this process (a
    subprocess costs a second of imports); the first proves it of a real `memeval` process."""
    cases = {
        "unknown engine `nope`": (["run", "--engine", "nope"], {}),
        "--workers must be at least 1": (["run", "--workers", "0"], {}),
        "--workers must be at least 1, not -2": (["run", "--workers", "-2"], {}),
        "is not a URL memeval can use": (["run"], {"MEMEVAL_BROKER_URL": "http://x"}),
        "cannot reach the broker": (["run"], {"MEMEVAL_BROKER_URL": "redis://127.0.0.1:1/0"}),
        "no run `nope`": (["status", "nope"], {}),
        "no run `gone`": (["run", "--resume", "gone"], {}),
        "--detach needs a broker": (["run", "--detach"], {}),
        "MEMEVAL_BROKER_URL is not set": (["worker"], {}),
    }
    for name in [n for n in os.environ if n.startswith("MEMEVAL_")]:
        monkeypatch.delenv(name)
    base = {k: v for k, v in farm.env.items() if k.startswith("MEMEVAL_")}
    for n, (message, (args, env)) in enumerate(cases.items()):
        result = farm.run(*args) if n == 0 else run_cli_here(*args, env={**base, **env})
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert not farm.db.exists() or not farm.rows("select 1 from runs")  # nothing half-started


def _parent(pid: int) -> int:
    try:
        return int(stat(pid)[1])
    except OSError:
        return 0


def _farm_processes(farm: Farm) -> list[int]:
    """Worker nodes and pool processes of this farm still alive on this machine. Every process
    `memeval run` starts inherits the farm's environment, whose marks folder is this test's
    own: farms of tests running alongside (pytest-xdist) are not this test's business. Redis
    writes its process title over that environment, so a test that needs its Redis gone takes
    it from the run's children while the run is alive, as the test of a run killed outright
    does."""
    own = f"MEMEVAL_TEST_MARKS={farm.marks}".encode() + b"\x00"
    pids = [int(p.name) for p in Path("/proc").glob("[0-9]*")]
    return [
        pid
        for pid in pids
        if alive(pid) and process_name(pid) == NODE_NAME and own in proc_file(pid, "environ")
    ]
