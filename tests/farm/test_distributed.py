"""The farm on the machine's Redis: `memeval worker` processes do the work, `memeval run` only
dispatches and waits, or detaches and leaves the chord callback to close the run."""

from __future__ import annotations

import json
import re
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import redis

from memeval.evaluation.jobs import CaseJob, planned
from memeval.runner import RunOptions
from memeval.runner.context import tenant_part
from memeval.store import open_store
from memeval.suites.catalog import resolve
from memeval_farm.config import make_app
from memeval_farm.dispatch import dispatch
from memeval_farm.settings import FarmSettings
from tests.farm.conftest import Farm, stop, wait_for
from tests.farm.engines import SECRETIVE, SLOW


def test_dispatch_only_run_detach_status_runs_and_flower(shared: Farm) -> None:
    port = _free_port()
    shared.env["MEMEVAL_FLOWER_BASIC_AUTH"] = "ann:pw"
    flower = shared.start("flower", "--port", str(port), log="flower.log")
    worker = shared.start("worker", "--concurrency", "2", log="worker.log")
    try:
        run = shared.run("run", "--only", "cfo_on_date", "--only", "brain_lookup",
                         "--label", "dist", "--out", str(shared.tmp / "out" / "dist"))  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        assert [c["status"] for c in shared.report("dist")["cases"]] == ["done", "done"]
        (dist_id,) = shared.rows("select id from runs where label = 'dist'")[0]

        api = f"http://127.0.0.1:{port}/api/tasks"
        assert httpx.get(api).status_code == 401
        assert b"ann:pw" not in Path(f"/proc/{flower.pid}/cmdline").read_bytes()
        tasks = httpx.get(api, params={"search": dist_id}, auth=("ann", "pw")).json()
        names = sorted(t["name"] for t in tasks.values())
        assert names == ["memeval.finish_run", "memeval.run_case", "memeval.run_case"]
        assert all(dist_id in t["args"] for t in tasks.values())

        detached = shared.run("run", "--detach", "--dimension", "multihop", "--label", "bg")
        assert detached.returncode == 0, detached.stdout + detached.stderr
        run_id = detached.stdout.split()[-1]
        held = re.search(r"sent (\d+) cases: ([\d.]+) KB of case bodies wait", detached.stdout)
        assert held and int(held[1]) > 1 and float(held[2]) > 0, detached.stdout
        # Nobody waits for this run: the chord callback itself must close it.
        wait_for(
            lambda: shared.rows("select status from runs where id = ?", run_id) == [("finished",)],
            60,
            "the chord callback to finish the detached run",
        )
        status = shared.run("status", run_id, "--json", str(shared.tmp / "bg.json"))
        assert status.returncode == 0, status.stderr
        assert f"{run_id} finished" in status.stdout
        report = json.loads((shared.tmp / "bg.json").read_text())
        assert report["cases"] and not report["missing"]
        assert report["dimensions"]["multihop"] is not None

        runs = shared.run("runs")
        assert runs.returncode == 0 and run_id in runs.stdout and "dist" in runs.stdout
    finally:
        stop(worker)
        stop(flower)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def monitor(url: str) -> Iterator[list[str]]:
    """Every command the Redis server receives meanwhile, from any client: task messages,
    events, results and chord state included."""
    seen: list[str] = []
    # No read timeout: a quiet spell (a worker still starting on a busy machine) is no error,
    # and redis-py's default 5 s one ended the reader before the first command.
    client = redis.Redis.from_url(url, socket_timeout=None)
    with client.monitor() as feed:

        def read() -> None:
            try:
                for command in feed.listen():
                    seen.append(command["command"])
            except (redis.ConnectionError, ValueError, AttributeError):
                return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            yield seen
        finally:
            feed.connection.disconnect()
            reader.join(5)


def test_no_secret_reaches_messages_store_logs_or_reports(shared: Farm, redis_url: str) -> None:
    secret = f"sk-or-v1-{uuid.uuid4().hex}"
    shared.env.update(MEMEVAL_TEST_SECRET=secret, OPENROUTER_API_KEY=secret)
    out = shared.tmp / "out" / "secret"
    with monitor(redis_url) as commands:
        worker = shared.start("worker", "--concurrency", "2", log="worker.log")
        try:
            run = shared.run("run", "--engine", SECRETIVE, "--only", "cfo_on_date",
                             "--only", "never_stored_parking", "--label", "secret",
                             "--out", str(out), "--verbose")  # fmt: skip
        finally:
            stop(worker)
    assert run.returncode == 1, run.stdout + run.stderr  # cfo_on_date errors, quoting the key
    assert len(commands) > 50 and any("memeval.run_case" in c for c in commands)
    cases = {c["case_id"]: c for c in shared.report("secret")["cases"]}
    # The header value is masked whole, scheme and token.
    assert cases["dimensions/temporal/cfo_on_date"]["error"].endswith("Authorization: ***")
    assert cases["dimensions/abstention/never_stored_parking"]["status"] == "done"

    places = {
        "redis traffic": "\n".join(commands),
        "worker log": (shared.tmp / "worker.log").read_text(),
        "run output": run.stdout + run.stderr,
        "reports": (out / "report.json").read_text() + (out / "report.md").read_text(),
        "store": b"".join(p.read_bytes() for p in shared.db.parent.iterdir()).decode("latin-1"),
    }
    for place, text in places.items():
        assert secret not in text, f"the secret leaked into the {place}"


def test_a_redelivered_case_is_stored_once_and_the_chord_completes(
    shared: Farm, redis_url: str, namespace: str
) -> None:
    """The same message delivered twice, as Redis does after a visibility timeout: two
    executions, one row, and the chord still closes the run with the right counts."""
    settings = FarmSettings(broker_url=redis_url, namespace=namespace)
    app = make_app(settings)
    store = open_store(shared.env["MEMEVAL_DATABASE_URL"])
    cases = [c.case for c in resolve("dimensions").cases if c.case.name in _THREE]
    jobs = [
        CaseJob(run_id="dup", engine=SLOW, case=case, trial=0, options=RunOptions())
        for case in cases
    ]
    store.create_run(run_id="dup", label="dup", engine=SLOW, suite="dimensions",
                     planned=[planned(j.case, j.trial) for j in jobs])  # fmt: skip
    task_ids = dispatch(app, "dup", jobs).task_ids
    broker = redis.Redis.from_url(redis_url)
    queue = settings.key_prefix + settings.queue
    messages = broker.lrange(queue, 0, -1)
    assert len(messages) == len(jobs)
    twice = messages[-1]  # the oldest: consumed first
    broker.lpush(queue, twice)
    twice_case = task_ids[json.loads(twice)["headers"]["id"]].case.case_id

    worker = shared.start("worker", "--concurrency", "2", log="worker.log")
    try:
        wait_for(
            lambda: shared.rows("select status from runs") == [("finished",)],
            60,
            "the chord callback to finish the run",
        )
    finally:
        stop(worker)
    rows = shared.rows("select case_id, status from case_results")
    assert sorted(rows) == sorted((j.case.id, "done") for j in jobs)
    writes = {
        j.case.id: sum(tenant_part(j.case.id) in m.name for m in shared.marks.iterdir())
        for j in jobs
    }
    assertions = {j.case.id: len(j.case.assertions) for j in jobs}
    assert writes[twice_case] == 2 * assertions[twice_case]  # it really ran twice
    assert all(writes[c] == assertions[c] for c in writes if c != twice_case)


_THREE = {"cfo_on_date", "manager_exclusive_slot", "never_stored_parking"}
