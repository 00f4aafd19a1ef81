"""Masks every secret this process knows in text that leaves it: stored, logged, shown or reported.

Services quote what they were sent: an error body may echo the `Authorization` header, an
exception may carry a URL with a key in it. The store outlives the run and its reports go to
whoever asks, so every path out (the store's writes, the report writers, log records, task
messages, the CLI's errors) passes through `redact` here, the one place that knows what a
secret looks like:

- the value of every environment variable whose name marks a credential (`*_KEY`, `*_TOKEN`,
  `*SECRET*`, `*PASSWORD*`, `*_AUTH`, ...), the engines' and models' keys among them;
- what a credential looks like wherever it came from: a bearer token, an `sk-...` key, a JWT,
  the value of an `Authorization` or `api_key` header or parameter, a URL's password.

Masking is deliberately eager: a masked word in an error message costs a little reading, a
leaked key costs a rotation.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import traceback
from collections.abc import Mapping
from functools import lru_cache
from types import TracebackType
from typing import Any, TypeVar

from pydantic import BaseModel

MASK = "***"
MIN_SECRET = 6
"""Shorter values would mask ordinary words wherever they occur."""

KNOWN_VARS = (
    "OPENROUTER_API_KEY",
    "MEMEVAL_LLM_KEY",
    "MEMEVAL_HTTP_TOKEN",
    "CORTEX_API_KEY",
    "TINYHUMANS_API_KEY",
    "MEM0_API_KEY",
    "VERIFIEDSTATE_API_KEY",
    "MEMEVAL_FLOWER_BASIC_AUTH",
)
"""The credentials memeval itself reads; masked whatever their names' shape."""

_SECRET_VAR = re.compile(
    r"(KEY|KEYS|TOKEN|TOKENS|AUTH|CREDENTIALS?)$|SECRET|PASSWORD|PASSWD|APIKEY", re.I
)
"""A variable name that marks a credential. `*_KEY_PREFIX` or `PWD` (a folder) do not."""

SECRET_MARKERS = ("key", "token", "secret", "password")
"""Option names dropped from what is stored: matched by substring, so broader than the above."""

_HEADER = r"\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
_PAIRS = (
    ("api", "key"),
    ("access", "token"),
    ("refresh", "token"),
    ("client", "secret"),
    ("secret", "key"),
)
_PARAM_NAMES = tuple(f"{a}{sep}{b}" for a, b in _PAIRS for sep in ("", "-", "_"))
_PARAM = rf"\b(?:{'|'.join(_PARAM_NAMES)})[\"']?\s*[:=]\s*[\"']?"
_SQUASHED = tuple(f"{a}{b}" for a, b in _PAIRS)
"""The parameter names as `_hints` finds them, with `-` and `_` taken out of the text."""
_SHAPES: tuple[tuple[tuple[str, ...], re.Pattern[str], str], ...] = tuple(
    (hints, re.compile(pattern, re.I), replacement)
    for hints, pattern, replacement in (
        # A credential header's or parameter's value, quoted or not, in text, JSON or a URL;
        # a header's value may hold a space (`Bearer xyz`), a parameter's may not.
        (("authorization",), rf"({_HEADER})[^\"'\\\r\n,;}}]+", rf"\1{MASK}"),
        (_SQUASHED, rf"({_PARAM})[^\"'\\\s&,;}}]+", rf"\1{MASK}"),
        (("bearer",), r"\b(bearer)\s+[A-Za-z0-9._~+/=\-]{6,}", rf"\1 {MASK}"),
        (("sk-",), r"\bsk-[A-Za-z0-9_\-]{10,}", MASK),
        (("eyj",), r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", MASK),
        # A URL's password: scheme://user:password@host keeps the user and the host.
        (("://",), r"(\b[a-z][a-z0-9+.\-]*://[^/\s:@]*:)[^/\s@]+@", rf"\1{MASK}@"),
    )
)
"""Each shape with lower-case words, one of which any match of it contains: a text holding none
of them skips the pattern, so clean text costs ten substring scans, not six expressions."""

M = TypeVar("M", bound=BaseModel)


@lru_cache(maxsize=4096)
def is_secret_var(name: str) -> bool:
    """Cached: the environment is read on every masking, and its names hardly change."""
    return name in KNOWN_VARS or _SECRET_VAR.search(name) is not None


def secret_values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The credentials in the environment, longest first so a key never half-masks another."""
    env = os.environ if environ is None else environ
    values = {v for name, v in env.items() if len(v) >= MIN_SECRET and is_secret_var(name)}
    return tuple(sorted(values, key=lambda v: (-len(v), v)))


def redact(text: str) -> str:
    """`text` with every secret this process knows replaced by `***`."""
    return _redact(text, secret_values())


def _redact(text: str, values: tuple[str, ...]) -> str:
    for value in values:
        text = text.replace(value, MASK)
    seen = _hints(text)
    for hints, pattern, replacement in _SHAPES:
        if any(hint in seen for hint in hints):
            text = pattern.sub(replacement, text)
    return text


def _hints(text: str) -> str:
    """The text as the shapes' hints are looked for in it: lower case, and once more without
    `-` and `_` so that `api_key`, `api-key` and `apikey` are one word."""
    lowered = text.lower()
    return lowered + "\n" + lowered.replace("-", "").replace("_", "")


def _may_hold(text: str, values: tuple[str, ...]) -> bool:
    """Whether `redact` could change `text` or anything it was dumped from: values are also
    looked for JSON-escaped, so one holding a quote or a backslash is never missed."""
    if any(v in text or json.dumps(v)[1:-1] in text for v in values):
        return True
    seen = _hints(text)
    return any(hint in seen for hints, _, _ in _SHAPES for hint in hints)


def redact_data(value: Any) -> Any:
    """The same for JSON-shaped data, string by string, so the structure stays valid."""
    return _walk(value, secret_values())


def _walk(value: Any, values: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return _redact(value, values)
    if isinstance(value, Mapping):
        return {_walk(k, values): _walk(v, values) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(item, values) for item in value]
    return value


def redact_model(model: M) -> M:
    """`model` itself when nothing in it could be secret (the common case, and the cheap one:
    substring scans of its JSON), else a masked copy validated as the same type."""
    values = secret_values()
    if not _may_hold(model.model_dump_json(), values):
        return model
    return type(model).model_validate(_walk(model.model_dump(mode="json"), values))


def scrub_secrets(options: Mapping[str, Any]) -> dict[str, Any]:
    """Drop every option naming a credential, at any depth, and mask what is left.

    Names match by substring and deliberately broadly (`max_keys` goes too): a lost harmless
    option costs a line in a report, a stored API key costs a rotation.
    """
    return {
        name: redact_data(_scrub(value))
        for name, value in options.items()
        if not any(marker in str(name).lower() for marker in SECRET_MARKERS)
    }


def _scrub(value: Any) -> Any:
    if isinstance(value, Mapping):
        return scrub_secrets(value)
    if isinstance(value, list | tuple):
        return [_scrub(item) for item in value]
    return value


def install_masking() -> None:
    """Mask every log record of this process as it is made, whichever logger or handler
    (Celery's included, set up later) ends up writing it, and any traceback that escapes.
    Idempotent; forked children inherit it."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "memeval_masks", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        mask_record(record)
        return record

    factory.memeval_masks = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)
    sys.excepthook = _masked_excepthook


def _masked_excepthook(
    kind: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> None:
    sys.stderr.write(redact("".join(traceback.format_exception(kind, exc, tb))))


def mask_record(record: logging.LogRecord) -> None:
    """Mask the record's message, traceback and stack. Its arguments stay as they are while
    they hold no secret, or once masked one by one, since some formatters read them (uvicorn's
    access log unpacks them: with none, every request of `memeval serve` printed a logging
    error); otherwise the message is frozen masked, and formatters use it as given."""
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: let logging report it as it always does
        return
    if redact(message) != message:
        if isinstance(record.args, tuple) and isinstance(record.msg, str):
            record.msg = redact(record.msg)
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        if redact(shown := record.getMessage()) != shown:
            record.msg, record.args = redact(message), None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
