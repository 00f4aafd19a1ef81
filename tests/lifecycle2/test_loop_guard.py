"""The loop guard (`memeval run --suite loop_guard`): a careless host pastes every recalled pack
into the next user turn, and no face of the engine may keep a copy of an injected block."""

from __future__ import annotations

import pytest

from memeval.agent import INJECTED_NOTE, injected
from memeval.engines.types import INJECTED_CLOSE, INJECTED_OPEN, Pack
from memeval.results import CaseResult, CheckStatus
from memeval.scoring.kpis import kpis
from memeval.suites.scenario import Scenario
from tests.lifecycle2.engines import StoresInjected, Tiny, served
from tests.lifecycle2.helpers import run, scenario

FACES = {"pack", "resume", "context", "answer", "listing", "derived", "beliefs"}


def shortened(exchanges: int) -> Scenario:
    """The shipped conversation cut to its first `exchanges`, with the probes it still answers
    (the whole of it takes a loaded machine most of a minute on the reference engine)."""
    full = scenario("loop_guard", "loop_guard_launch_week")
    thread = full.threads[0]
    cut = thread.model_copy(update={"exchanges": thread.exchanges[:exchanges]})
    probes = [p for p in full.probes if int(p.evidence[0].split(".")[1]) < exchanges]
    return full.model_copy(update={"threads": [cut], "probes": probes})


def copies(result: CaseResult) -> float | None:
    return next(k.value for k in kpis([result]) if k.name == "injected_copies")


def test_the_shipped_conversation_is_long_and_echoes_its_packs() -> None:
    full = scenario("loop_guard", "loop_guard_launch_week")
    assert [t.echo_packs for t in full.threads] == [True]
    assert len(full.thread_lines["launch"]) >= 300


def test_a_pasted_pack_sits_between_the_markers_with_the_hosts_note() -> None:
    block = injected(Pack(markdown="# Memory\n\n- launch on 14 January\n"))
    assert block.startswith(f"{INJECTED_OPEN}\n{INJECTED_NOTE}\n# Memory")
    assert block.rstrip().endswith(INJECTED_CLOSE)


def test_the_reference_engine_is_searched_on_every_face() -> None:
    result = run(shortened(50), "reference")
    assert result.status.value == "done"
    guard = [e for e in result.erase if e.mode == "loop_guard"]
    assert {e.face for e in guard} == FACES
    looked = [e for e in guard if e.status in (CheckStatus.passed, CheckStatus.failed)]
    failed = [e for e in looked if e.status is CheckStatus.failed]
    assert copies(result) == pytest.approx(len(failed) / len(looked))


def test_an_engine_that_drops_the_block_keeps_no_copy() -> None:
    with served(Tiny()) as engine:
        result = run(shortened(50), engine)
    assert all(p.hit for p in result.probes if p.scored)
    assert copies(result) == 0.0


def test_an_engine_that_stores_the_block_is_caught() -> None:
    with served(StoresInjected()) as engine:
        result = run(shortened(50), engine)
    guard = {e.face: e.found for e in result.erase if e.mode == "loop_guard"}
    assert INJECTED_OPEN in guard["pack"] and INJECTED_NOTE in guard["derived"]
    assert (copies(result) or 0) > 0.3
