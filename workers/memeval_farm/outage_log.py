"""A broker or result-store outage in a worker's log: one line per condition, no tracebacks.

The worker rides an outage out on its own (Celery reconnects; a case whose result could not
be stored runs again, and the dispatcher closes the run from the store), yet Celery logged
each symptom as a traceback: a result it could not store, the task handler that then failed,
the chord that lost a member, and a reconnect message every few seconds. An operator reading
the log saw pages of Redis internals for one condition that needs no action. This filter
keeps Celery's records (never memeval's own) and cuts those that are about a lost connection
to one line, said once a minute at most; any other error keeps its traceback.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from celery.signals import after_setup_logger

CELERY = ("celery", "kombu", "py.warnings")
"""Loggers whose records may be cut: Celery's, and Python's warnings, through which Celery
reports a result it could not store."""
LOST = re.compile(
    r"redis\.exceptions\.(ConnectionError|TimeoutError)|network:ConnectionError"
    r"|kombu\.exceptions\.OperationalError|ConnectionRefusedError|Connection refused"
    r"|Connection closed by server|Cannot connect to"
)
"""What a record says when its cause is the broker or result store going away."""
ADVICE = "In Celery 5.1 we introduced an optional breaking change"
"""Celery's advice, on every lost connection, to cancel long tasks then (a warning of eight
lines): the cases are idempotent and fenced, and riding a blip out is the choice made here.
Celery's logging set-up shows every one of its deprecation warnings, so a warnings filter set
before it would not hold."""
REPEAT_S = 60.0
"""A condition is said again after this long, so a long outage still shows it continues."""


class OutageLines(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self._said: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(CELERY):
            return True
        message = record.getMessage()
        if ADVICE in message:
            return False
        details = record.exc_text or ""
        if record.exc_info and not details:
            details = logging.Formatter().formatException(record.exc_info)
        if not LOST.search(message + "\n" + details):
            return True
        line = _first_line(message)
        condition = re.sub(r"[\d.]+", "#", line)  # the same condition, whatever its counts
        now = time.monotonic()
        last = self._said.get(condition)
        if last is not None and now - last < REPEAT_S:
            return False
        self._said[condition] = now
        # A warning carries its traceback in its text; a logged error, beside it.
        source = details or (message if "\n" in message.strip() else "")
        cause = f" [{_cause(source)}]" if source else ""
        record.msg = f"{line}{cause}: the broker or result store is unreachable; riding it out"
        record.args, record.exc_info, record.exc_text, record.stack_info = None, None, None, None
        return True


def _first_line(message: str) -> str:
    """The record's first line, with a warning's `path:line: Category:` prefix dropped."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    return re.sub(r"^\S+\.py:\d+: \w+: ", "", first).strip()


def _cause(traceback: str) -> str:
    """The last exception line of a traceback, short."""
    lines = [ln.strip() for ln in traceback.strip().splitlines() if ln.strip()]
    named = [ln for ln in lines if re.match(r"^[\w.]+(Error|Exception)\b", ln)]
    return (named[-1] if named else lines[-1] if lines else "")[:160]


def install() -> None:
    """Filter every handler Celery sets up on a worker's root logger (its pool's children
    inherit them)."""
    after_setup_logger.connect(_filter_handlers, weak=False)


def _filter_handlers(logger: logging.Logger, **_: Any) -> None:
    lines = OutageLines()
    for handler in logger.handlers:
        if not any(isinstance(f, OutageLines) for f in handler.filters):
            handler.addFilter(lines)
