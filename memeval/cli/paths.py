"""Output paths, checked before any work starts.

A report path that cannot be written is found out only when the report is written: for
`memeval run` that is after the last case, which would leave a finished run without the report
the user asked for, and for the other commands it would be a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path

from memeval.errors import UsageError


def check_output(option: str, path: Path | None, *, folder: bool = False) -> None:
    """`path` is given to `option` and must be writable as a file (or, with `folder`, as a
    folder of reports); its missing parents are created later."""
    if path is None:
        return
    want = "folder" if folder else "file path"
    if path.exists() and path.is_dir() != folder:
        kind = "file" if folder else "folder"
        raise UsageError(f"{option} {path} is a {kind}", fix=f"give {option} a {want}")
    existing = next(p for p in (path.absolute(), *path.absolute().parents) if p.exists())
    if existing != path.absolute() and not existing.is_dir():
        raise UsageError(
            f"{option} {path}: {existing} is a file, so nothing can be written under it",
            fix=f"give {option} a {want} outside {existing}",
        )
    target = existing if existing.is_dir() else existing.parent
    if not os.access(target, os.W_OK):
        raise UsageError(
            f"{option} {path}: {target} is not writable", fix=f"give {option} a {want} you own"
        )
