"""The check made once before any case is sent: the engine answers, accepts its key and speaks a
protocol memeval understands, and the workers store results where the dispatcher reads them.

Without it one bad setting fails every case slowly (a wrong token: every case retried, then
an error, minutes per case), or worse, loses them (workers writing to another store than the
one the dispatcher watches).

Where the check runs follows who holds the keys:
- embedded and `--in-process`: the workers inherit this process's environment, so this process
  calls the engine's `preflight()` itself, before the run even exists.
- a fleet: this process has no keys. It asks every live worker with a broadcast control
  command, which each worker's main process answers at once instead of queueing it behind
  other runs' cases: the worker builds the engine from its own environment, calls
  `preflight()`, and reads the run back from its own store. The run row this process has just
  written is the token: a worker that cannot read it stores somewhere else. When no worker is
  up there is nobody to ask; the cases wait in the queue, as they always could.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celery import Celery
from celery.worker.control import control_command
from pydantic import BaseModel, ValidationError

from memeval.errors import MemevalError, UsageError, WorkerRefused
from memeval.evaluation.preflight import engine_problem
from memeval.store import Store, open_store
from memeval_farm.broker import BROKER_FAULTS

CONTROL = "memeval_preflight"
PING_TIMEOUT_S = 1.0
STORE_FIX = (
    "give this shell and every worker the same MEMEVAL_DATABASE_URL: a postgresql:// server "
    "they all reach (a sqlite:/// file is shared only by processes on one machine)"
)


class Verdict(BaseModel):
    """One worker's answer: where it stores results, and what is wrong, if anything."""

    store: str
    holds_run: bool = False
    slots: int = 0
    """Cases the worker runs at once (its pool's processes or threads)."""
    error: str | None = None
    fix: str = ""
    exit_code: int = UsageError.exit_code


def problem(error: MemevalError) -> Verdict:
    return Verdict(store="", error=error.message, fix=error.fix, exit_code=error.exit_code)


def verdict(run_id: str, engine: str) -> Verdict:
    """This process's answer, as a worker: its store must hold the run, its engine must pass."""
    try:
        store = open_store()
        try:
            where = store.url.render_as_string(hide_password=True)
            holds = store.run_status(run_id) is not None
        finally:
            store.dispose()
    except MemevalError as exc:
        return problem(exc)
    except Exception as exc:  # whatever the driver raises: the worker's store is unusable
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Verdict(
            store="",
            error=f"the worker cannot use its results store: {first}",
            fix=STORE_FIX,
        )
    found = engine_problem(engine)
    if found is None:
        return Verdict(store=where, holds_run=holds)
    answer = problem(found)
    answer.store, answer.holds_run = where, holds
    return answer


@control_command(  # type: ignore[untyped-decorator]  # celery ships no type hints
    args=[("run_id", str), ("engine", str)], signature="<run_id> <engine>"
)
def memeval_preflight(state: Any, run_id: str, engine: str) -> dict[str, Any]:
    """Answered by each worker's main process, with that worker's environment and store."""
    answer = verdict(run_id, engine)
    answer.slots = int(getattr(state.consumer.pool, "num_processes", 0) or 0)
    return answer.model_dump()


def check_fleet(
    app: Celery,
    store: Store,
    run_id: str,
    engine: str,
    *,
    timeout: float,
    say: Callable[[str], None],
) -> int:
    """Ask every live worker; raise the first problem any of them reports. Returns how many
    cases the workers that answered run at once, all told (0 when none answered)."""
    try:
        nodes = sorted(node for reply in app.control.ping(timeout=PING_TIMEOUT_S) for node in reply)
        if not nodes:
            say(
                "[yellow]no worker is up yet[/]: nobody can check the engine's key and the "
                "workers' store before the cases are queued"
            )
            return 0
        replies = app.control.broadcast(
            CONTROL,
            arguments={"run_id": run_id, "engine": engine},
            destination=nodes,
            reply=True,
            timeout=timeout,
            limit=len(nodes),
        )
    except BROKER_FAULTS:
        return 0  # the wait rides out the broker; the check is a courtesy on top
    verdicts = _read(replies or [])
    mine = store.url.render_as_string(hide_password=True)
    for node, answer in verdicts.items():
        if answer.error is None and not answer.holds_run:
            raise UsageError(
                f"worker {node} stores results in {answer.store}, which does not hold run "
                f"{run_id}; this shell stores them in {mine}",
                fix=STORE_FIX,
            )
    for node, answer in verdicts.items():
        if answer.error is not None:
            raise WorkerRefused(
                f"worker {node}: {answer.error}", fix=answer.fix, exit_code=answer.exit_code
            )
    silent = [node for node in nodes if node not in verdicts]
    if silent:
        say(f"[yellow]{len(silent)} workers did not answer the check in {timeout:g}s[/]")
    return sum(answer.slots for answer in verdicts.values())


def _read(replies: list[dict[str, Any]]) -> dict[str, Verdict]:
    verdicts: dict[str, Verdict] = {}
    for reply in replies:
        for node, body in reply.items():
            try:
                verdicts[node] = Verdict.model_validate(body)
            except ValidationError:
                raise UsageError(
                    f"worker {node} does not know memeval's preflight check (it answered {body!r})",
                    fix="run the same memeval version on every worker",
                ) from None
    return dict(sorted(verdicts.items()))
