"""The vector cache keeps one SQLite connection a thread: what another process (or another
cache object) adds is still seen at once, and a forked process (a prefork farm worker) reads and
writes through a connection of its own, not the one it inherited."""

from __future__ import annotations

import multiprocessing

import numpy as np

from memeval.embeddings.cache import VectorCache


def vectors(texts: list[str]) -> np.ndarray:
    return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def refuse(texts: list[str]) -> np.ndarray:
    raise AssertionError(f"computed again: {texts}")


def add_in_child(cache: VectorCache, texts: list[str]) -> None:
    cache.through("m", 2, texts, vectors)


def test_rows_another_writer_adds_are_seen_by_an_open_connection(tmp_path):
    reader, writer = VectorCache(tmp_path / "v.sqlite"), VectorCache(tmp_path / "v.sqlite")
    assert reader.get([b"x"]) == {}  # its connection is open now
    _, computed = writer.through("m", 2, ["one", "three"], vectors)
    found, again = reader.through("m", 2, ["three", "one"], refuse)
    assert (computed, again) == (2, 0)
    assert found.tolist() == [[5.0, 1.0], [3.0, 1.0]]


def test_a_forked_process_uses_a_connection_of_its_own(tmp_path):
    cache = VectorCache(tmp_path / "v.sqlite")
    cache.through("m", 2, ["parent"], vectors)  # the parent's connection, open before the fork
    child = multiprocessing.get_context("fork").Process(
        target=add_in_child, args=(cache, ["parent", "child"])
    )
    child.start()
    child.join(60)
    assert child.exitcode == 0
    found, computed = cache.through("m", 2, ["child", "parent"], refuse)
    assert computed == 0 and found.tolist() == [[5.0, 1.0], [6.0, 1.0]]
