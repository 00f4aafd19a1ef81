"""A reader's terminal: a page's shell blocks typed one after the other into one bash, in a
working folder of their own, with the installed `memeval` first on the PATH.

The page is one bash script, as a reader following it keeps one terminal: an `export`, a
server started in the background and the files a command writes are there for the next block.
Each statement is framed by marker lines, so its output, its exit status and any Python
traceback are laid at its page and line. What the terminal cannot do as written:

- `pip install SPEC` is checked, not run: a bash function checks that SPEC (`.` is memeval,
  with its extras) is installed in this environment, which is the fresh install under test;
- nothing reaches past 127.0.0.1: the proxy variables point at a closed port, and Hugging Face
  is told it is offline, so a block that would call the network fails instead;
- no key is in the environment: blocks that need one carry a `skip` note.

Servers started in the background are waited for until they listen, and the whole process
group is stopped when the page ends, whether it passed, failed or timed out.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from tests.docs.blocks import Block, Statement

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MARK = "@@docs-run"
MARKS = re.compile(rf"^{MARK} (start|end) (\d+)(?: (\d+))? ([\d.]+)$", re.MULTILINE)
TRACEBACK = "Traceback (most recent call last)"
DEAD_PROXY = "http://127.0.0.1:9"
NOT_READY = 98
"""The script's exit status when a background command never listened."""


class Failure(BaseModel):
    where: str
    command: str
    reason: str
    output: str

    def __str__(self) -> str:
        return f"{self.where}: `{self.command}` {self.reason}\n{self.output[-2500:]}"


class Outcome(BaseModel):
    ran: list[str]
    not_run: list[str]
    failures: list[Failure]
    seconds: float
    slowest: list[str]  # the page's longest commands, with their seconds


class Step(BaseModel):
    block: Block
    statement: Statement
    status: int
    background: bool


def steps(blocks: list[Block], slow: bool) -> tuple[list[Step], list[str]]:
    """What runs, in order, and what does not (with the page's reason)."""
    run, skipped = [], []
    for block in blocks:
        for statement, directives in block.plan():
            verbs = {d.verb: d for d in directives}
            where = f"{block.page}:{statement.line}"
            if "skip" in verbs or ("slow" in verbs and not slow):
                why = verbs.get("skip") or verbs["slow"]
                skipped.append(f"{where} {why.verb} ({why.reason}): {statement.flat}")
                continue
            run.append(
                Step(
                    block=block,
                    statement=statement,
                    status=verbs["exit"].status if "exit" in verbs else 0,
                    background="background" in verbs or statement.flat.endswith("&"),
                )
            )
    return run, skipped


def script(run: list[Step]) -> str:
    python = shlex.quote(sys.executable)
    lines = [
        "set -o pipefail",
        f'pip() {{ {python} {shlex.quote(str(HERE / "pip_check.py"))} "$@"; }}',
        f'__docs_ready() {{ {python} {shlex.quote(str(HERE / "ready.py"))} "$1"'
        f" || exit {NOT_READY}; }}",
    ]
    for n, step in enumerate(run):
        text = step.statement.text
        if step.background and not step.statement.flat.endswith("&"):
            text = step.statement.flat + " &"
        lines.append(f"printf '\\n{MARK} start {n} %s\\n' \"$EPOCHREALTIME\"")
        # errexit also stops a loop at a failing round; a status the page expects is read.
        lines.append("set -e" if step.status == 0 else "set +e")
        lines.append(text)
        lines.append("__s=$?; set +e")
        if step.background:
            lines.append("__docs_ready $!")
        lines.append(f'printf \'\\n{MARK} end {n} %d %s\\n\' "$__s" "$EPOCHREALTIME"')
        lines.append(f'[ "$__s" = {step.status} ] || exit 97')
    return "\n".join(lines) + "\n"


def environment(folder: Path) -> dict[str, str]:
    """A newcomer's shell: this install's `memeval` first, no key, no network."""
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", str(folder)),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "COLUMNS": "100",
        "XDG_STATE_HOME": str(folder.parent / "state"),  # `memeval view` announces itself there
        "HF_HUB_OFFLINE": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = DEAD_PROXY
    for name in ("XDG_CACHE_HOME", "MEMEVAL_CACHE", "VIRTUAL_ENV"):  # models already fetched
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def clone_view(folder: Path) -> Path:
    """A folder that reads as a fresh clone (the checkout's tracked entries, linked), where a
    block's own files land; `shared` beside it, as the docs' `../shared/...` expect."""
    folder.mkdir(parents=True)
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    for name in sorted({line.split("/", 1)[0] for line in listed.splitlines()}):
        (folder / name).symlink_to(ROOT / name)
    for near in (ROOT.parent / "shared", ROOT.parent.parent / "shared"):
        if near.is_dir() and not (folder.parent / "shared").exists():
            (folder.parent / "shared").symlink_to(near)
    return folder


def uses_ports(run: list[Step]) -> bool:
    """Whether the page starts a server or calls one on a fixed local port."""
    return any(s.background or "127.0.0.1:" in s.statement.text for s in run)


@contextlib.contextmanager
def ports_held(needed: bool) -> Iterator[None]:
    """One page at a time, machine-wide, may start servers: the docs name fixed ports."""
    if not needed:
        yield
        return
    with open(Path(tempfile.gettempdir()) / "memeval-docs-run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def stop_group(pgid: int) -> None:
    """Every process the page started, servers included: TERM, then KILL what is left."""
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def run_page(blocks: list[Block], folder: Path, *, timeout: float, slow: bool = False) -> Outcome:
    """Run the blocks' statements in `folder` (made by `clone_view` or by hand)."""
    run, skipped = steps(blocks, slow)
    (folder.parent / "page.sh").write_text(script(run), encoding="utf-8")
    log = folder.parent / "page.log"
    started = time.monotonic()
    timed_out = False
    with ports_held(uses_ports(run)), open(log, "wb") as output:
        process = subprocess.Popen(
            ["bash", str(folder.parent / "page.sh")],
            cwd=folder,
            env=environment(folder),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            stop_group(process.pid)
            process.wait()
    text = log.read_text(encoding="utf-8", errors="replace")
    failures = judge(run, text, process.returncode, timed_out, timeout)
    took = timings(text)
    ran = [f"{s.block.page}:{s.statement.line} {s.statement.flat}" for s in run]
    slowest = sorted(took, key=lambda n: -took[n])[:3]
    return Outcome(
        ran=ran,
        not_run=skipped,
        failures=failures,
        seconds=time.monotonic() - started,
        slowest=[f"{took[n]:.1f} s {run[n].statement.flat}" for n in slowest],
    )


def timings(text: str) -> dict[int, float]:
    """Seconds per statement that ended, from the markers' clock readings."""
    marks = [(m.group(1), int(m.group(2)), float(m.group(4))) for m in MARKS.finditer(text)]
    began = {n: at for kind, n, at in marks if kind == "start"}
    # A statement cut off mid-marker (a background child writing at the same instant) has no
    # start to measure from: it goes untimed rather than failing the page.
    return {n: at - began[n] for kind, n, at in marks if kind == "end" and n in began}


def judge(run: list[Step], text: str, code: int, timed_out: bool, timeout: float) -> list[Failure]:
    """Each statement's output and status against what its page says."""
    marks = list(MARKS.finditer(text))
    chunks: dict[int, str] = {}
    ended: dict[int, int] = {}
    for n, mark in enumerate(marks):
        index = int(mark.group(2))
        stop = marks[n + 1].start() if n + 1 < len(marks) else len(text)
        chunks[index] = chunks.get(index, "") + text[mark.end() : stop]
        if mark.group(1) == "end":
            ended[index] = int(mark.group(3))
    failures = []
    for index, step in enumerate(run):
        where = f"{step.block.page}:{step.statement.line}"
        out = chunks.get(index)
        if out is None:
            break  # never reached: an earlier statement stopped the page
        if index not in ended:
            if timed_out:
                reason = f"did not finish within the page's {timeout:g} s"
            elif code == NOT_READY:
                reason = "was started in the background and never listened on a port"
            else:
                reason = f"exited with status {code}" + _expected(step)
            failures.append(Failure(where=where, command=step.statement.flat, reason=reason,
                                    output=out))  # fmt: skip
            break
        if ended[index] != step.status:
            reason = f"exited with status {ended[index]}" + _expected(step)
            failures.append(
                Failure(where=where, command=step.statement.flat, reason=reason, output=out)
            )
        elif TRACEBACK in out:
            failures.append(
                Failure(
                    where=where,
                    command=step.statement.flat,
                    reason="printed a traceback",
                    output=out,
                )
            )
    if not marks and code != 0:
        failures.append(Failure(where="page", command="bash", reason=f"exit {code}", output=text))
    return failures


def _expected(step: Step) -> str:
    if step.status == 0:
        return " (no note beside the block documents a failure)"
    return f", where the page's note expects {step.status}"
