"""The results store as the commands and `memeval.evaluate` open it: a store that cannot be used
is bad input.

The store connects lazily, so without a check here a SQLite path under a file, a file that is
not a database or an unreachable server would surface as a traceback from deep in SQLAlchemy,
and for `memeval run` only after the engine and the models were set up.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import URL
from sqlalchemy.exc import DatabaseError

from memeval.errors import UsageError
from memeval.evaluation.paths import check_output
from memeval.store import Store, open_store

FIX = (
    "point MEMEVAL_DATABASE_URL (or --database-url) at a SQLite file in a writable folder, "
    "e.g. sqlite:///memeval-runs/memeval.db, or at a reachable postgresql:// server"
)


def usable_store(url: str | None = None) -> Store:
    """The store, connected and with its schema, before any run exists in it."""
    store = open_store(url)
    if store.url.get_backend_name() == "sqlite":
        check_output("MEMEVAL_DATABASE_URL", Path(str(store.url.database)))
    try:
        store.engine  # noqa: B018 - connecting and creating the schema is the check
    except (OSError, DatabaseError) as exc:
        raise store_error(exc, store.url) from None
    return store


def store_error(exc: OSError | DatabaseError, url: URL | None = None) -> UsageError:
    """One line saying which store failed and why, with the driver's first line as the why."""
    if isinstance(exc, DatabaseError):
        reason = str(exc.orig or exc).strip().splitlines()[0]
    else:
        reason = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
    where = f" at {url.render_as_string(hide_password=True)}" if url is not None else ""
    return UsageError(f"cannot use the results store{where}: {reason}", fix=FIX)
