"""The items of a benchmark file's top-level JSON list, read one at a time.

Published benchmark files are large (LongMemEval-S is about 300 MB, -M about 2.7 GB), and
`json.loads` of the whole text holds the text and every parsed object at once: several times
the file's size. An incremental parser keeps one item in memory, so an import costs the same
whatever the file's length.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ijson

from memeval.errors import SuiteError


def json_items(path: Path, what: str, fix: str) -> Iterator[Any]:
    """Each element of the file's top-level list, parsed; `what` names the format in errors."""
    count = 0
    try:
        with path.open("rb") as handle:
            for item in ijson.items(handle, "item", use_float=True):
                count += 1
                yield item
    except OSError as exc:
        raise SuiteError(f"cannot read the {what} file: {exc}", path=path) from None
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        where = f" after item {count}" if count else ""
        reason = str(exc).splitlines()[0]
        raise SuiteError(
            f"not JSON{where}: {reason}", path=path, line=_line_of_error(path), fix=fix
        ) from None
    if count == 0:
        raise SuiteError(f"a {what} file is a non-empty JSON list", path=path, fix=fix)


LOCATE_LIMIT = 64 * 1024 * 1024
"""A broken file up to this size is parsed again whole to give the line it breaks on; a larger
one is named by the item it broke after, since reading it whole is what streaming avoids."""


def _line_of_error(path: Path) -> int | None:
    if path.stat().st_size > LOCATE_LIMIT:
        return None
    try:
        json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return exc.lineno if isinstance(exc, json.JSONDecodeError) else None
    return None
