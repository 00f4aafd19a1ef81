"""The pinned clock: every case has an evaluation time, every engine call reads it (in process
and over the wire), and suite settings give it per file or per folder."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memeval.errors import SuiteError
from memeval.suites.common import DEFAULT_NOW
from memeval.suites.fixture import Fixture
from memeval.suites.loader import load_paths
from tests.adapters.conftest import TOKEN, engine_at, served
from tests.format.helpers import Recording, case, run

FIXTURE = """
kind: fixture
dimension: temporal
name: {name}
title: A contract that ends
tests: expiry
{now}
assertions:
  - id: c
    text: The Helix support contract is active.
    source: procurement
    valid_to: 2030-01-01T00:00:00Z
queries:
  - text: Is the Helix support contract active?
    checks: [{{contains: active}}]
"""


def fixture(now: str = "", name: str = "ends") -> str:
    return FIXTURE.format(now=now, name=name)


def test_a_fixture_without_now_runs_at_the_default_never_the_wall_clock():
    engine = Recording()
    result = run(case(fixture()), engine)
    assert engine.clock == [DEFAULT_NOW]
    assert result.evaluated_at == DEFAULT_NOW


def test_a_fixture_runs_at_its_own_now():
    engine = Recording()
    run(case(fixture('now: "2031-05-01T00:00:00Z"')), engine)
    assert engine.clock == [datetime(2031, 5, 1, tzinfo=UTC)]


def test_a_scenario_asks_at_its_evaluation_time():
    engine = Recording()
    text = """
kind: scenario
name: clocked
title: Probes ask at now
start: 2026-03-02
now: 2026-04-01T12:00:00Z
threads:
  - id: t
    exchanges: [{user: Standup is on Tuesdays., reply: Noted.}]
probes:
  - {id: p, question: "When is standup?", style: lexical, expect: [Tuesdays], via: resume}
"""
    run(case(text), engine)
    at = datetime(2026, 4, 1, 12, tzinfo=UTC)
    assert set(engine.clock) == {at}


def test_now_before_the_last_write_is_refused():
    text = """
kind: scenario
name: early
title: Asked before it was said
start: 2026-03-02
now: 2026-03-01T00:00:00Z
threads:
  - id: t
    exchanges: [{user: a, reply: b}]
probes:
  - {id: p, question: q, style: lexical, expect: [a]}
"""
    with pytest.raises(ValueError, match="before the last write"):
        case(text)


def test_suite_settings_by_folder_then_file_then_case(tmp_path: Path):
    (tmp_path / "suite.yaml").write_text('kind: suite\nnow: "2030-06-01T00:00:00Z"\n')
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "a.yaml").write_text(fixture(name="folder"))
    (inner / "b.yaml").write_text(
        'kind: suite\nnow: "2029-01-01T00:00:00Z"\n---\n'
        + fixture(name="file")
        + "---\n"
        + fixture('now: "2028-01-01T00:00:00Z"', name="own")
    )
    loaded = {c.case.name: c.case for c in load_paths([tmp_path])}
    assert all(isinstance(c, Fixture) for c in loaded.values())
    times = {name: c.evaluation_time for name, c in loaded.items()}
    assert times == {
        "folder": datetime(2030, 6, 1, tzinfo=UTC),
        "file": datetime(2029, 1, 1, tzinfo=UTC),
        "own": datetime(2028, 1, 1, tzinfo=UTC),
    }


def test_bad_suite_settings_are_located(tmp_path: Path):
    (tmp_path / "suite.yaml").write_text("kind: suite\nnow: soon\n")
    (tmp_path / "a.yaml").write_text(fixture())
    with pytest.raises(SuiteError) as caught:
        load_paths([tmp_path])
    where = caught.value.render()
    assert "suite.yaml:2" in where and "field `now`" in where


def test_the_evaluation_time_crosses_the_wire(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", TOKEN)
    inside = Recording()
    for url in served(inside):
        run(case(fixture('now: "2031-05-01T00:00:00Z"')), engine_at("http", url))
    assert inside.clock == [datetime(2031, 5, 1, tzinfo=UTC)]


def test_questions_cross_the_wire(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", TOKEN)
    inside = Recording()
    text = """
kind: scenario
name: wire
title: The question reaches a served engine
start: 2026-03-02
threads:
  - id: t
    exchanges: [{user: Standup is on Tuesdays., reply: Noted.}]
probes:
  - {id: p, question: "When is standup?", style: lexical, expect: [Tuesdays], via: resume}
"""
    for url in served(inside):
        run(case(text), engine_at("http", url))
    assert inside.questions == ["When is standup?"] * 2
