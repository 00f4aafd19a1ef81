"""A resume fences the dispatch before it: what the earlier dispatch left queued does not run
(nor pay a model again), its closing step does not close the run, and a finished run's rows
never change. On the machine's Redis, with `memeval worker` processes, as a fleet runs."""

from __future__ import annotations

import json
import re

import redis

from tests.farm.conftest import Farm, stop, wait_for
from tests.llm.server import KEY, FakeOpenRouter

SUPERSEDED = "a later dispatch of its run (a resume) superseded this message"


def test_a_resume_fences_the_messages_an_earlier_dispatch_left(shared: Farm) -> None:
    with FakeOpenRouter(prices={"test/cheap": (1, 2)}) as model:
        shared.env.update(OPENROUTER_API_KEY=KEY, MEMEVAL_CACHE_DIR=str(shared.tmp / "cache"))
        llm = ("--llm", "--model", "test/cheap", "--base-url", model.base_url)
        # No worker yet: the first dispatch's ten messages wait in the broker, as they do when
        # its dispatcher is killed before a worker takes them.
        first = shared.run("run", "--detach", "--dimension", "temporal", "--label", "f", *llm)
        assert first.returncode == 0, first.stdout + first.stderr
        run_id = first.stdout.split()[-1]
        again = shared.run("run", "--resume", run_id, "--detach")
        assert again.returncode == 0, again.stdout + again.stderr
        assert "10 of 10 cases to run" in again.stdout, again.stdout
        worker = shared.start("worker", "--concurrency", "2", log="worker.log")
        try:
            wait_for(
                lambda: (
                    shared.rows("select status from runs where id = ?", run_id) == [("finished",)]
                ),
                180,
                "the resumed run to finish",
            )
            wait_for(
                lambda: (shared.tmp / "worker.log").read_text().count(SUPERSEDED) >= 11,
                60,
                "the first dispatch's ten cases and its closing step to be skipped",
            )
        finally:
            stop(worker)
        log = (shared.tmp / "worker.log").read_text()
        calls = model.attempts
    skipped = re.findall(r"case (\S+) not run: " + re.escape(SUPERSEDED), log)
    assert len(skipped) == 10 and len(set(skipped)) == 10, log
    assert "closing step of an earlier dispatch skipped" in log
    rows = shared.rows("select status, count(*) from case_results where run_id = ? "
                       "group by status", run_id)  # fmt: skip
    assert rows == [("done", 10)], rows
    payloads = shared.rows("select payload from case_results where run_id = ?", run_id)
    answers = sum(
        q.get("model_answer") is not None for (p,) in payloads for q in json.loads(p)["queries"]
    )
    assert calls == answers > 0, "every call the model service saw belongs to one pass"


def test_a_detached_run_whose_chord_was_lost_is_closed_by_its_last_case(
    shared: Farm, redis_url: str, namespace: str
) -> None:
    detached = shared.run("run", "--detach", "--dimension", "temporal", "--label", "nochord")
    assert detached.returncode == 0, detached.stdout + detached.stderr
    run_id = detached.stdout.split()[-1]
    client = redis.Redis.from_url(redis_url)
    sizes = list(client.scan_iter(f"{namespace}:celery-taskset-meta-*.s"))
    assert sizes, "no chord state to lose"
    client.delete(*sizes)  # what a Redis restored from an older append-only file lacks
    client.close()
    worker = shared.start("worker", "--concurrency", "2", log="worker.log")
    try:
        wait_for(
            lambda: shared.rows("select status from runs where id = ?", run_id) == [("finished",)],
            180,
            "the run's last case to close it",
        )
    finally:
        stop(worker)
    rows = shared.rows("select count(*) from case_results where run_id = ?", run_id)
    assert rows == [(10,)]
