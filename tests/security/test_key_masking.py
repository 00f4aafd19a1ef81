"""A model key echoed back by the service must reach nothing that outlives the call.

`memeval run --llm` runs on the fleet path (a real `memeval worker` at DEBUG, Flower, the
machine's Redis; one worker process, so the service's rotation of faults reaches the answerer
in order) against a model service that quotes the `Authorization` header in its 401,
429, 5xx and in-200 error bodies. Afterwards the key is searched, as bytes, in the results
store's files, every report, the run's and the worker's output, Flower's task list and every
Redis key of the run's namespace.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import redis

from memeval.secrets import MASK
from tests.farm.conftest import Farm, stop
from tests.security.echo_service import MODEL, EchoService

KEY = "or-live-SENTINEL-9c1e5b7a2d"
"""Not `sk-`-shaped on purpose: only knowing the environment's keys can mask it bare."""

CASES = ("brain_lookup", "conflicts", "cfo_on_date", "never_stored_parking", "dependency_cycle")


def test_an_echoed_key_reaches_no_store_report_log_task_or_flower(shared: Farm) -> None:
    shared.env.update(OPENROUTER_API_KEY=KEY, MEMEVAL_FLOWER_BASIC_AUTH="ann:pw-for-flower")
    port = _free_port()
    flower = shared.start("flower", "--port", str(port), log="flower.log")
    worker = shared.start("worker", "--concurrency", "1", "--loglevel", "DEBUG", log="worker.log")
    out = shared.tmp / "out" / "echo"
    try:
        with EchoService() as service:
            run = shared.run(
                "run", "--llm", "--model", MODEL, "--base-url", service.base_url,
                *(arg for case in CASES for arg in ("--only", case)),
                "--label", "echo", "--verbose", "--out", str(out),
            )  # fmt: skip
            assert service.authorizations == {f"Bearer {KEY}"}, "the key was not sent"
            assert {429, 500, 502, 503, 401, 0} <= set(service.seen), service.seen
        assert run.returncode in (0, 1), run.stdout + run.stderr
        assert "Traceback" not in run.stderr
        (run_id,) = shared.rows("select id from runs where label = 'echo'")[0]
        errors = [e for (e,) in shared.rows("select error from case_results") if e]
        # The echoes did land in the results, masked: the search below is not vacuous.
        assert any(f"Authorization: {MASK}" in e for e in errors), errors
        for status in ("401", "429", "503"):
            assert any(f"({status}: " in e and MASK in e for e in errors), (status, errors)
        tasks = _flower_tasks(port, run_id)
        assert '"memeval.run_case"' in tasks
    finally:
        stop(worker)
        stop(flower)

    places = {p.name: p.read_bytes() for p in _files(shared.tmp)}
    assert {"memeval.db", "report.md", "report.json", "report.html", "worker.log"} <= set(places)
    places |= {
        "run stdout": run.stdout.encode(),
        "run stderr": run.stderr.encode(),
        "flower tasks": tasks.encode(),
        "redis": _namespace_dump(shared),
    }
    assert (
        b"retry" in places["worker.log"].lower() or b"received task" in places["worker.log"].lower()
    ), "the worker logged nothing at DEBUG"
    leaked = [name for name, data in places.items() if KEY.encode() in data]
    assert not leaked, f"the key leaked into {leaked}"


def _files(root: Path) -> list[Path]:
    """Every file the run left: the store with its WAL, reports, logs."""
    return [p for p in root.rglob("*") if p.is_file()]


def _flower_tasks(port: int, run_id: str) -> str:
    api = f"http://127.0.0.1:{port}/api/tasks"
    deadline = time.monotonic() + 30
    while True:
        try:
            reply = httpx.get(api, params={"search": run_id}, auth=("ann", "pw-for-flower"))
            if reply.status_code == 200 and "memeval.run_case" in reply.text:
                return reply.text
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("Flower never listed the run's tasks")
        time.sleep(0.3)


def _namespace_dump(farm: Farm) -> bytes:
    """Every value under the run's Redis namespace, whatever its type."""
    url, prefix = farm.env["MEMEVAL_BROKER_URL"], farm.env["MEMEVAL_NAMESPACE"]
    client = redis.Redis.from_url(url)
    chunks = []
    for key in client.scan_iter(f"{prefix}:*"):
        dumped = client.dump(key)
        chunks.append(dumped or b"")
    client.close()
    return b"\n".join(chunks)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
