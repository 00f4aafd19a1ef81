"""Every store test runs twice: on a temporary SQLite file and on a real PostgreSQL.

PostgreSQL is required, not optional: a missing server fails the Postgres half loudly, so a
green run can never mean "only SQLite was tested".
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memeval.results import (
    CaseResult,
    CaseStatus,
    CheckResult,
    CheckStatus,
    Phase,
    ProbeResult,
)
from memeval.store import Store, open_store

if TYPE_CHECKING:
    import psycopg

PG_ADMIN_URL = os.environ.get(
    "MEMEVAL_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def _pg_admin(dbname: str | None = None) -> psycopg.Connection:
    # psycopg is imported where it is used: collection (once per xdist worker) skips it.
    import psycopg

    conninfo = psycopg.conninfo.make_conninfo(PG_ADMIN_URL, connect_timeout=5)
    if dbname is not None:
        conninfo = psycopg.conninfo.make_conninfo(conninfo, dbname=dbname)
    try:
        return psycopg.connect(conninfo, autocommit=True)
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is unreachable at {PG_ADMIN_URL} ({exc}). The store tests need it: "
            "start one with trust auth on 127.0.0.1:5432, or point MEMEVAL_TEST_POSTGRES at one.",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """A throwaway database for this session, dropped afterwards even if tests left clients."""
    from psycopg import sql

    name = f"memeval_test_{uuid.uuid4().hex[:12]}"
    with _pg_admin() as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield name
    finally:
        with _pg_admin() as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def _pg_schema_url(database: str) -> tuple[str, Callable[[], None]]:
    """A fresh schema per test, selected through search_path, so tests cannot see each other."""
    import psycopg
    from psycopg import sql

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with _pg_admin(database) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    info = psycopg.conninfo.conninfo_to_dict(PG_ADMIN_URL)
    host, port, user = info.get("host", "127.0.0.1"), info.get("port", "5432"), info["user"]
    # Plain postgresql:// on purpose: the store must rewrite it to psycopg 3 itself.
    url = f"postgresql://{user}@{host}:{port}/{database}?options=-csearch_path%3D{schema}"

    def drop() -> None:
        with _pg_admin(database) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))

    return url, drop


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs' / 'memeval.db'}"
        return
    url, drop = _pg_schema_url(request.getfixturevalue("pg_database"))
    yield url
    drop()


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with open_store(store_url) as opened:
        yield opened


def make_result(
    run_id: str,
    case_id: str,
    trial: int = 0,
    *,
    status: CaseStatus = CaseStatus.done,
    score: float | None = 1.0,
    probes: int = 2,
    checks: int = 1,
) -> CaseResult:
    return CaseResult(
        run_id=run_id,
        case_id=case_id,
        trial=trial,
        kind="fixture",
        dimension="temporal",
        engine="naive",
        tenant=f"{run_id}/{case_id}/{trial}",
        status=status,
        score=score,
        probes=[
            ProbeResult(
                probe=f"p{i}",
                phase=Phase.recall,
                via="query",
                style="lexical",
                scored=True,
                question=f"question {i}?",
                expect=["answer"],
                hit=i % 2 == 0,
                rank=i + 1 if i % 2 == 0 else None,
            )
            for i in range(probes)
        ],
        checks=[
            CheckResult(query=i, kind="contains", value=f"v{i}", status=CheckStatus.failed)
            for i in range(checks)
        ],
    )


@pytest.fixture
def result_factory() -> Callable[..., CaseResult]:
    return make_result
