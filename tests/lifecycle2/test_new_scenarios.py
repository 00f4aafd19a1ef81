"""The coding-session and task-drift scenarios: tool-heavy facts and a goal that changes."""

from __future__ import annotations

import pytest

from memeval.results import CaseResult
from tests.lifecycle2.engines import FirstImpressions, Tiny, served
from tests.lifecycle2.helpers import run, scenario

NAMES = ("coding_session", "task_drift")


def hits(result: CaseResult) -> dict[str, bool]:
    return {p.probe: p.hit for p in result.probes if p.phase.value == "recall"}


@pytest.mark.parametrize("name", NAMES)
def test_each_has_paraphrase_probes_and_evidence(name: str) -> None:
    case = scenario("lifecycle", name)
    scored = [p for p in case.probes if p.scored]
    assert sum(p.style.value == "paraphrase" for p in scored) >= 3
    assert all(p.evidence for p in scored)
    assert any(p.via.value == "resume" for p in scored)


def test_the_coding_session_is_tool_heavy() -> None:
    case = scenario("lifecycle", "coding_session")
    tools = [t for ex in case.threads[0].exchanges for t in ex.tools]
    assert len(tools) >= 5 and {t.name for t in tools} >= {"run_shell", "grep", "edit_file"}


@pytest.mark.parametrize("name", NAMES)
def test_the_reference_engine_runs_them(name: str) -> None:
    result = run(scenario("lifecycle", name), "reference")
    assert result.status.value == "done" and result.error is None
    assert len(hits(result)) == len(scenario("lifecycle", name).probes)


def test_an_engine_that_stops_listening_misses_the_changed_goal() -> None:
    with served(Tiny()) as engine:
        full = run(scenario("lifecycle", "task_drift"), engine)
    with served(FirstImpressions()) as engine:
        stuck = run(scenario("lifecycle", "task_drift"), engine)
    assert hits(full)["current-plan"] and hits(full)["stipend"]
    assert not hits(stuck)["current-plan"] and not hits(stuck)["stipend"]
    assert (stuck.score or 0) < (full.score or 0)
