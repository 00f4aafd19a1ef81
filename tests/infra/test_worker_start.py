"""A worker connects to its results store as it starts, not at its first case: a thread
pool's first cases all connected at once, each checking the schema in turn, and the first
round of a run waited for every one of them."""

from __future__ import annotations

import psycopg

from tests.farm.conftest import Farm, wait_for
from tests.infra.conftest import wait_ready, worker


def connections(url: str) -> int:
    """Sessions other than this one open on the URL's database."""
    with psycopg.connect(url, connect_timeout=5) as admin:
        row = admin.execute(
            "select count(*) from pg_stat_activity "
            "where datname = current_database() and pid <> pg_backend_pid()"
        ).fetchone()
    return int(row[0]) if row else 0


def test_a_worker_holds_a_store_connection_before_its_first_case(fleet: Farm, pg_url: str) -> None:
    fleet.env["MEMEVAL_DATABASE_URL"] = pg_url
    with worker(fleet, "--pool", "threads"):
        wait_ready(fleet)
        wait_for(lambda: connections(pg_url) >= 1, 20, "the worker's store connection")
