"""The shell blocks of a page, cut into the statements a reader types, with the notes the page
keeps beside each block for the run of `test_docs_run.py`.

A note is an HTML comment right before the block's fence (invisible on the site and on GitHub),
one directive a line, each with its reason in parentheses:

    <!-- docs-run: skip (needs a Zep key) -->
    <!-- docs-run:
    exit 2 `memeval suites validate my-cases/` (my-cases/ stands for your folder: absent here)
    background `memeval view` (serves the store until stopped)
    slow `memeval run --suite locomo:` (LoCoMo's development split: minutes per engine)
    -->

- `skip`: not run here (a hosted key, a Docker engine, a cluster, a process that never ends);
- `exit N`: the command is meant to end with status N (a failure the page shows on purpose);
- `background`: started in the background, waited for until it listens on a port, and stopped
  when the page ends (a statement ending in `&` is one already, with no note);
- `slow`: run only when `MEMEVAL_DOCS_SLOW=1` (a separate test id, skipped otherwise).

A directive naming a command (between backticks) applies to the statements starting with it,
the longest such prefix winning; without one it applies to the whole block.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

SHELLS = ("bash", "sh", "shell", "console")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
DIRECTIVE = re.compile(
    r"^(?P<verb>skip|exit|background|slow)(?:\s+(?P<status>\d+))?"
    r"(?:\s+`(?P<command>[^`]+)`)?\s*(?:\((?P<reason>.*)\))?$"
)
OPENS = ("for ", "while ", "until ", "if ")
CLOSES = ("done", "fi")

Verb = Literal["skip", "exit", "background", "slow"]


class NoteError(ValueError):
    """A note the test cannot act on: unknown, without a reason, or naming no statement."""


class Directive(BaseModel):
    verb: Verb
    reason: str
    status: int = 0
    command: str | None = None


class Statement(BaseModel):
    """What a reader types at one prompt: continuation lines joined, a loop whole."""

    line: int
    text: str  # as written, handed to bash
    flat: str  # on one line, comments cut: what notes match and failures name

    def applies(self, directives: list[Directive]) -> list[Directive]:
        """The block's directives for this statement: the longest matching command wins."""
        named = [d for d in directives if d.command and self.flat.startswith(d.command)]
        if named:
            longest = max(len(d.command or "") for d in named)
            return [d for d in named if len(d.command or "") == longest]
        return [d for d in directives if d.command is None]


class Block(BaseModel):
    page: str
    line: int
    statements: list[Statement]
    directives: list[Directive]

    def plan(self) -> list[tuple[Statement, list[Directive]]]:
        """Each statement with its directives; a directive that matches nothing is an error."""
        planned = [(s, s.applies(self.directives)) for s in self.statements]
        for directive in self.directives:
            if not any(directive in found for _, found in planned):
                raise NoteError(
                    f"{self.page}:{self.line}: `{directive.command}` names no command of the block"
                )
        return planned


def parse_note(text: str, where: str) -> list[Directive]:
    """The directives of one `docs-run:` comment, each with its reason."""
    found = []
    for raw in text.strip().splitlines():
        line = raw.strip()
        if not line:
            continue
        match = DIRECTIVE.match(line)
        if match is None:
            raise NoteError(f"{where}: `{line}` is no docs-run directive (skip, exit N, ...)")
        reason = (match["reason"] or "").strip()
        if not reason:
            raise NoteError(f"{where}: `{line}` gives no reason: add one in parentheses")
        if (match["verb"] == "exit") != (match["status"] is not None):
            raise NoteError(f"{where}: `{line}`: `exit` takes a status, and only `exit` does")
        found.append(
            Directive(
                verb=match["verb"],  # type: ignore[arg-type]
                reason=reason,
                status=int(match["status"] or 0),
                command=match["command"],
            )
        )
    return found


def statements(body: str, first_line: int, language: str) -> list[Statement]:
    """The block's statements. A `console` block's commands are its `$ ` lines."""
    lines = body.splitlines()
    if language == "console":
        lines = [ln[2:] if ln.startswith("$ ") else "" for ln in lines]
    found: list[Statement] = []
    pending: list[str] = []
    start, depth = 0, 0
    for n, raw in enumerate(lines):
        if not pending and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        if not pending:
            start = n
        pending.append(raw)
        if raw.endswith("\\"):
            continue
        words = raw.strip()
        depth += words.startswith(OPENS)
        depth -= words.startswith(CLOSES) or words.endswith(tuple(f"; {c}" for c in CLOSES))
        if depth > 0:
            continue
        text = "\n".join(pending)
        flat = " ".join(text.replace("\\\n", " ").split())
        flat = re.split(r"\s+#\s", flat, maxsplit=1)[0]
        found.append(Statement(line=first_line + 1 + start, text=text, flat=flat))
        pending = []
    return found


def note_before(text: str, start: int) -> str | None:
    """The `docs-run:` comment ending right before `start`, if any."""
    head = text[:start].rstrip()
    if not head.endswith("-->"):
        return None
    comment = head[head.rfind("<!--") + 4 : -3].strip()
    return comment.removeprefix("docs-run:") if comment.startswith("docs-run:") else None


def fenced(text: str) -> list[tuple[str, int, str, str | None]]:
    """Every fenced block of a page: its language, first line, body and the note before it."""
    return [
        (
            m.group(1),
            text.count("\n", 0, m.start()) + 1,
            m.group(2),
            note_before(text, m.start()),
        )
        for m in FENCE.finditer(text)
    ]


def shell_blocks(name: str, text: str) -> list[Block]:
    """The shell blocks of page `name`, notes parsed (a bad note raises `NoteError`)."""
    return [
        Block(
            page=name,
            line=line,
            statements=statements(body, line, language),
            directives=parse_note(note, f"{name}:{line}") if note is not None else [],
        )
        for language, line, body, note in fenced(text)
        if language in SHELLS
    ]
