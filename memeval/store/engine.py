"""Engines tuned for many writer processes: SQLite in WAL mode with IMMEDIATE write transactions,
PostgreSQL through psycopg 3 with a pre-pinged pool.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, func, select
from sqlalchemy.engine import URL
from sqlmodel import SQLModel

from memeval.errors import UsageError
from memeval.store.tables import TABLES

BUSY_TIMEOUT_MS = 30_000
POOL_SIZE = 4  # kept open per process; writes serialise anyway, extra threads open and close
WRITE = {"memeval_write": True}  # execution option: open the transaction as a writer
_SCHEMA_LOCK = 0x6D656D6576616C  # "memeval": serialises CREATE TABLE across Postgres clients


def _on_sqlite_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
    # Take BEGIN away from the sqlite3 module so `_on_sqlite_begin` decides its flavour.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        # busy_timeout first: switching to WAL itself needs a lock another process may hold.
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        mode = _switch_to_wal(cursor)
        # In WAL mode NORMAL never corrupts the file and survives any process crash (SIGKILL
        # included); only a power cut can drop the last commits. FULL syncs every commit,
        # which was most of what storing a case cost.
        cursor.execute("PRAGMA synchronous = NORMAL")
    finally:
        cursor.close()
    if mode.lower() != "wal":
        raise UsageError(
            f"SQLite refused WAL mode (got `{mode}`), so parallel workers would lock each other",
            fix="put the database on a local disk, or use PostgreSQL via MEMEVAL_DATABASE_URL",
        )


def _switch_to_wal(cursor: sqlite3.Cursor) -> str:
    """Retry by hand: when several processes open a new database at once, the switch can meet
    SQLITE_BUSY without busy_timeout being consulted (SQLite refuses to wait where waiting could
    deadlock), so the timeout alone does not cover it."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            (mode,) = cursor.execute("PRAGMA journal_mode = WAL").fetchone()
            return str(mode)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def _on_sqlite_begin(connection: Connection) -> None:
    # A deferred transaction that reads and then writes cannot wait for a lock in WAL mode: it
    # fails at once with "database is locked". IMMEDIATE takes the write lock up front, where
    # busy_timeout applies, so concurrent writers queue instead of failing.
    immediate = connection.get_execution_options().get("memeval_write", False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def make_engine(url: URL) -> Engine:
    """Build an engine for the calling process only; never share one across a fork.

    Both back ends pool their connections: opening a SQLite file and setting its pragmas cost
    more than a whole small write, so a per-call connection made every stored case pay it.
    `Store` keeps a child from ever using, or closing, a pool it inherited.
    """
    if url.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
    Path(str(url.database)).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, pool_size=POOL_SIZE, max_overflow=-1)
    event.listen(engine, "connect", _on_sqlite_connect)
    event.listen(engine, "begin", _on_sqlite_begin)
    return engine


def create_schema(engine: Engine) -> None:
    """Create missing tables, once even when every worker starts at the same moment."""
    with engine.execution_options(**WRITE).begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(select(func.pg_advisory_xact_lock(_SCHEMA_LOCK)))
        SQLModel.metadata.create_all(connection, tables=TABLES)
