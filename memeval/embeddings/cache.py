"""Vectors kept on disk by the hash of their text, so a text is embedded once per model.

One SQLite file under the cache folder: every process of a run (farm workers, the model
service, a benchmark) reads and adds to it at once, which SQLite's write-ahead log allows, and
a second run over the same texts computes nothing. A key is the sha256 of the text under the
model's name, so two models never share a row.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

CHUNK = 500  # keys per SELECT: under SQLite's limit on bound parameters


def key(model: str, text: str) -> bytes:
    return hashlib.sha256(f"{model}\0{text}".encode()).digest()


class VectorCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._held = threading.local()
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB)")

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection, in a transaction. It stays open: a `dense` engine looks
        up one session's vectors at a time (24,000 lookups for a LongMemEval S file), and
        opening a connection cost ten times the lookup (0.5 ms of CPU against 0.06 ms). A
        forked process opens its own, never its parent's."""
        held: tuple[int, sqlite3.Connection] | None = getattr(self._held, "db", None)
        if held is None or held[0] != os.getpid():
            held = (os.getpid(), sqlite3.connect(self.path, timeout=60))
            self._held.db = held
        with held[1] as db:
            yield db

    def get(self, keys: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        with self._db() as db:
            for start in range(0, len(keys), CHUNK):
                part = keys[start : start + CHUNK]
                marks = ",".join("?" * len(part))
                rows = db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", part)
                found.update(rows)
        return found

    def put(self, rows: list[tuple[bytes, bytes]]) -> None:
        with self._db() as db:
            db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", rows)

    def through(
        self,
        model: str,
        dimensions: int,
        texts: list[str],
        compute: Callable[[list[str]], NDArray[np.float32]],
    ) -> tuple[NDArray[np.float32], int]:
        """Vectors for `texts` (in order) and how many had to be computed: each distinct
        text missing from the cache is computed once, in one call, then kept."""
        keys = [key(model, t) for t in texts]
        found = self.get(list(dict.fromkeys(keys)))
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            computed = compute(list(missing.values()))
            pairs = zip(missing, computed, strict=True)
            rows = [(k, v.astype(np.float32).tobytes()) for k, v in pairs]
            self.put(rows)
            found.update(rows)
        out = np.empty((len(texts), dimensions), dtype=np.float32)
        for row, k in enumerate(keys):
            out[row] = np.frombuffer(found[k], dtype=np.float32)
        return out, len(missing)
