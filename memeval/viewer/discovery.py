"""How `memeval run` finds a viewer that is already showing its store, to print the run's URL.

A running `memeval view` leaves a small file per store (keyed by a hash of the store's URL,
password hidden) holding its address and process id; a run reads it and checks the process
still lives. Nothing secret is written: the token, if any, is left out.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

from pydantic import BaseModel, ValidationError
from sqlalchemy.engine import URL

STATE_ENV = "MEMEVAL_STATE_DIR"


class Announcement(BaseModel):
    url: str
    pid: int


def _folder() -> Path:
    explicit = os.environ.get(STATE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "memeval" / "viewers"


def _file(database: str) -> Path:
    return _folder() / f"{hashlib.sha256(database.encode()).hexdigest()[:16]}.json"


def announce(database: str, url: str) -> Path:
    path = _file(database)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(Announcement(url=url, pid=os.getpid()).model_dump_json())
    return path


def withdraw(path: Path) -> None:
    path.unlink(missing_ok=True)


def running_viewer(database: str) -> str | None:
    """The address of a live viewer of this store, or None."""
    path = _file(database)
    try:
        found = Announcement.model_validate_json(path.read_text())
    except (OSError, ValidationError):
        return None
    try:
        os.kill(found.pid, 0)
    except ProcessLookupError:
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    except PermissionError:
        pass  # alive, another user's
    return found.url


def run_url(database: str, run_id: str) -> str | None:
    base = running_viewer(database)
    return None if base is None else f"{base.rstrip('/')}/runs/{run_id}"


def store_key(url: URL) -> str:
    """The store's URL as the key both sides compute: rendered with its password hidden."""
    return url.render_as_string(hide_password=True)
