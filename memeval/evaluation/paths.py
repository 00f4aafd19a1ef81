"""Output paths, checked before any work starts.

A report path that cannot be written is found out only when the report is written: for
`memeval run` that is after the last case, which would leave a finished run without the report
the user asked for, and for the other commands it would be a traceback.
"""

from __future__ import annotations

import tempfile
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
    try:  # by writing, not `os.access`: root passes that everywhere, even on read-only mounts
        with tempfile.TemporaryFile(dir=target):
            pass
    except OSError as exc:
        raise UsageError(
            f"{option} {path}: cannot write in {target} ({exc.strerror or exc})",
            fix=f"give {option} a {want} you own",
        ) from None
