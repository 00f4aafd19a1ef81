"""A real results store holding finished, running and failed runs, and the viewer serving it on
127.0.0.1 in a thread of this process (uvicorn, as `memeval view` runs it)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn

import memeval
from memeval.engines.naive import NaiveEngine
from memeval.store import Store, open_store
from memeval.viewer.app import create_app
from tests.farm.conftest import farm as farm  # the farm's fixtures, for a detached run's viewer
from tests.farm.conftest import namespace as namespace
from tests.farm.conftest import redis_url as redis_url
from tests.farm.conftest import shared as shared


class DownEngine(NaiveEngine):
    """An engine whose every write fails: every case of its run ends errored."""

    async def store(self, tenant: str, assertion: object) -> None:  # type: ignore[override]
        raise RuntimeError("the store refused the write: disk full at /var/lib/engine")


class Runs:
    """The ids of the runs the store was filled with."""

    def __init__(self, url: str) -> None:
        self.url = url
        common = {"database_url": url, "workers": 1}
        self.naive = memeval.evaluate("naive", dimension="temporal", label="naive-t", **common)
        self.reference = memeval.evaluate(
            "reference", dimension="temporal", label="ref-t", **common
        )
        self.scenario = memeval.evaluate(
            "naive", suites="lifecycle", only="isolation", label="naive-iso", **common
        )
        self.failed = memeval.evaluate(DownEngine(), dimension="provenance", label="down", **common)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    folder = tmp_path_factory.mktemp("store")
    return Runs(f"sqlite:///{folder / 'memeval.db'}")


@pytest.fixture(scope="module")
def store(runs: Runs) -> Store:
    return open_store(runs.url)


@contextmanager
def serving(store: Store, token: str | None = None) -> Iterator[str]:
    config = uvicorn.Config(
        create_app(store, token), host="127.0.0.1", port=0, log_level="warning",
        timeout_graceful_shutdown=1,
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="viewer", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the viewer did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def viewer(store: Store) -> Iterator[str]:
    with serving(store) as url:
        yield url


def fresh_store(tmp_path: Path) -> Store:
    store = open_store(f"sqlite:///{tmp_path / 'memeval.db'}")
    store.engine  # noqa: B018 - creates the schema
    return store
