"""A thread pool's first cases reach the store all at once; one engine must come of it.

Each spare engine checked the schema under PostgreSQL's advisory lock, one after another, and
a worker's first round of cases waited for every one of them.
"""

from __future__ import annotations

import threading

from memeval.store import open_store

THREADS = 16


def test_threads_arriving_at_once_share_one_engine(store_url: str) -> None:
    store = open_store(store_url)  # nothing connects until first use
    barrier = threading.Barrier(THREADS)
    engines: list[int] = []

    def first_use() -> None:
        barrier.wait(timeout=30)
        engines.append(id(store.engine))

    threads = [threading.Thread(target=first_use) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    try:
        assert len(engines) == THREADS
        assert len(set(engines)) == 1, f"{len(set(engines))} engines built for one store"
    finally:
        store.dispose()
