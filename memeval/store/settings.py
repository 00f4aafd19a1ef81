"""Where the store lives: `MEMEVAL_DATABASE_URL`, or a SQLite file beside the working directory."""

from __future__ import annotations

from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from memeval.errors import UsageError
from memeval.store.listing import DEFAULT_PATH

_POSTGRES_ALIASES = ("postgres", "postgresql")


class StoreSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMEVAL_", extra="ignore")

    database_url: str | None = None


def _parse(url: str) -> URL:
    try:
        return make_url(url)
    except ArgumentError as exc:
        raise UsageError(
            f"cannot parse the database URL `{url}`",
            fix="use sqlite:///path/to/file.db or postgresql://user@host/db",
        ) from exc


def database_url(url: str | None = None) -> URL:
    """Resolve and check the URL once, in the parent, so a bad one fails before any fork.

    A relative SQLite path is made absolute here because workers may run from another
    directory; `postgresql://` is pinned to psycopg 3, the one Postgres driver memeval ships.
    """
    raw = url or StoreSettings().database_url
    if raw is None:
        return make_url(f"sqlite:///{DEFAULT_PATH.resolve()}")
    parsed = _parse(raw)
    backend = parsed.get_backend_name()
    if backend in _POSTGRES_ALIASES:
        return parsed.set(drivername="postgresql+psycopg")
    if backend != "sqlite":
        raise UsageError(
            f"memeval stores results in SQLite or PostgreSQL, not `{backend}`",
            fix="set MEMEVAL_DATABASE_URL to a sqlite:/// or postgresql:// URL",
        )
    if parsed.database in (None, "", ":memory:"):
        raise UsageError(
            "an in-memory SQLite database cannot be shared between worker processes",
            fix="give a file path, e.g. sqlite:///memeval-runs/memeval.db",
        )
    return parsed.set(database=str(Path(parsed.database).resolve()))
