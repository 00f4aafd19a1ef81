"""One engine over LoCoMo conversations, each conversation's tally printed as it finishes.

With `isolate`, each conversation runs in a child process of its own (spawned, so it shares
no native state with this one): an engine whose native library crashes (graphiti's Kuzu 0.11
has segfaulted inside its full-text index) loses that conversation, not the run. A child that
dies is reported with its conversation and exit signal, run once more, and left out of the
sums if it dies again; the conversations that finished are summed as usual. Each child gets a
temporary folder of its own (TMPDIR), removed when it ends, so a crash leaves no store behind.
Ctrl-C stops the child and ends the run with one line naming the conversations that finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import resource
import shutil
import signal
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from multiprocessing.connection import Connection

from benchmarks.locomo_recall import Tally, measure, print_tallies
from memeval.engines.registry import create, models_of
from memeval.importers.locomo import Conversation

Tallies = dict[str, Tally]
TRIES = 2  # a crashed conversation is run once more


async def _conversation(name: str, conv: Conversation) -> Tallies:
    """A fresh engine for the conversation: in a child it is the process's only one."""
    engine = create(name)
    tallies: Tallies = defaultdict(Tally)
    try:
        await measure(engine, conv, tallies)
    finally:
        await engine.close()
    return dict(tallies)


def _child(name: str, conv: Conversation, out: Connection, tmp: str) -> None:
    """Ctrl-C reaches the whole process group, this child too: it keeps the SIGINT its parent
    held while starting it blocked, so the parent alone handles it, stopping this process."""
    os.environ["TMPDIR"] = tempfile.tempdir = tmp
    out.send(asyncio.run(_conversation(name, conv)))
    out.close()


def exit_reason(code: int | None) -> str:
    """`exit 1` for an exception, `signal 11 (SIGSEGV)` for a native crash."""
    if code is not None and code < 0:
        try:
            return f"signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


def in_child(name: str, conv: Conversation) -> Tallies | str:
    """The conversation's tallies, or why its process ended without them."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    tallies: Tallies | None = None
    # Ctrl-C is held until the folder and the child exist, so that it finds both to remove
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    tmp = tempfile.mkdtemp(prefix="memeval-locomo-")
    child = context.Process(target=_child, args=(name, conv, send, tmp), name=f"locomo-{conv.id}")
    try:
        child.start()
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a Ctrl-C held is raised here
        send.close()  # the child holds the only writer: a child that dies leaves EOF here
        with contextlib.suppress(EOFError):
            tallies = receive.recv()
        child.join()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        if child.is_alive():  # interrupted
            child.terminate()
            child.join()
        shutil.rmtree(tmp, ignore_errors=True)
    if child.exitcode != 0 or tallies is None:
        return exit_reason(child.exitcode)
    return tallies


def isolated(name: str, conv: Conversation) -> Tallies | str:
    """In a child, retried once if it dies; each death is printed at once."""
    reasons: list[str] = []
    for attempt in range(1, TRIES + 1):
        result = in_child(name, conv)
        if not isinstance(result, str):
            return result
        reasons.append(result)
        again = "running it once more" if attempt < TRIES else "left out of the sums"
        print(f"  {conv.id}: crashed ({result}) on try {attempt}; {again}", flush=True)
    return ", ".join(reasons)


def in_process(name: str) -> Callable[[Conversation], Tallies | str]:
    return lambda conv: asyncio.run(_conversation(name, conv))


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def score(name: str, conversations: list[Conversation], isolate: bool) -> dict[str, str]:
    """Print each conversation's tally as it finishes, then the sums by category; returns the
    conversations that crashed, with why."""
    shown = name.split("?url=")[0].split("&url=")[0]
    print(f"== {shown}" + (" (a process per conversation)" if isolate else ""), flush=True)
    for model in models_of(name):
        print(f"  {model}")
    run = (lambda conv: isolated(name, conv)) if isolate else in_process(name)
    totals: Tallies = defaultdict(Tally)
    crashed: dict[str, str] = {}
    finished: list[str] = []
    wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    try:
        for conv in conversations:
            began = time.perf_counter()
            result = run(conv)
            if isinstance(result, str):
                crashed[conv.id] = result
                continue
            finished.append(conv.id)
            for key, tally in result.items():
                totals[key].merge(tally)
            took = f"{conv.id} ({time.perf_counter() - began:.0f} s)"
            print(f"  {took} " + result.get("overall", Tally()).line("overall"), flush=True)
    except KeyboardInterrupt:
        names = f" ({', '.join(finished)})" if finished else ""
        print(
            f"  interrupted: {len(finished)} of {len(conversations)} conversations finished{names}",
            flush=True,
        )
        raise SystemExit(130) from None
    done = len(conversations) - len(crashed)
    print(f"  sums over {done} of {len(conversations)} conversations")
    print_tallies(totals)
    for conv_id, reason in crashed.items():
        print(f"  crashed: {conv_id} ({reason}), not counted")
    spent = time.process_time() - cpu + _children_cpu() - children
    line = f"  wall {time.perf_counter() - wall:.1f} s, CPU {spent:.1f} s"
    if isolate:
        largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        line += f", largest child's peak RSS {largest:.0f} MB"
    print(line, flush=True)
    return crashed
