"""A scenario's derived views are built once: the models are frozen, so nothing can make a
cached view stale, and the cache never reaches what the model serialises."""

from __future__ import annotations

from memeval.suites.catalog import resolve
from memeval.suites.scenario import Scenario


def scenarios() -> list[Scenario]:
    return resolve("lifecycle").scenarios


def test_thread_lines_and_last_write_are_computed_once_and_match_a_fresh_build():
    for s in scenarios():
        assert s.thread_lines is s.thread_lines
        for t in s.threads:
            assert list(s.thread_lines[t.id]) == t.lines(s.thread_start(t))
        fresh = [line.at for t in s.threads for line in t.lines(s.thread_start(t))]
        assert s.last_write == max(
            [*fresh, *(s.written_at(w) for w in [*s.documents, *s.learnings])]
        )
        assert s.last_write is s.last_write


def test_the_cache_stays_out_of_dumps_schema_and_equality():
    s = next(s for s in scenarios() if s.threads)
    before = s.model_dump_json()
    _ = s.thread_lines, s.last_write, s.write_ids(), s.evaluation_time
    assert s.model_dump_json() == before
    assert {"thread_lines", "last_write"}.isdisjoint(s.model_dump())
    assert {"thread_lines", "last_write"}.isdisjoint(Scenario.model_json_schema()["properties"])
    assert Scenario.model_validate_json(before) == s  # a fresh copy, nothing cached yet
