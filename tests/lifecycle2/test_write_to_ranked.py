"""Write-to-ranked lag (`lag: true`): from a write's ack to the first pack that ranks it, a
latency KPI of its own, apart from settle time."""

from __future__ import annotations

import pytest

from memeval.errors import SuiteError
from memeval.runner import RunOptions
from memeval.scoring.kpis import kpis
from memeval.suites.loader import load_file
from tests.lifecycle2.engines import LateIndex, Tiny, served
from tests.lifecycle2.helpers import run, scenario


def values(result) -> dict[str, float | None]:  # type: ignore[no-untyped-def]
    return {k.name: k.value for k in kpis([result])}


def test_the_reference_engine_ranks_a_document_and_the_lag_is_reported() -> None:
    result = run(scenario("lifecycle", "coding_session"), "reference")
    [lag] = result.lags
    assert (lag.probe, lag.write) == ("new-migration", "dev-notes")
    assert lag.ms is not None and lag.polls >= 1
    got = values(result)
    assert got["write_to_ranked_p50"] == pytest.approx(lag.ms, abs=0.01)
    assert got["unranked_rate"] == 0.0
    # The polls are timed apart: neither the agent's write-time recalls nor the probes.
    polls = [t for t in result.timings if t.step == "lag"]
    assert len(polls) == lag.polls and {t.call for t in polls} == {"lag_poll"}
    user_turns = sum(1 for t in result.timings if t.step == "write" and t.call == "pre_turn")
    assert user_turns == 8, "six exchanges and two chores: one recall per user turn"


def test_an_engine_that_indexes_in_the_background_shows_its_lag() -> None:
    with served(Tiny()) as engine:
        quick = run(scenario("lifecycle", "coding_session"), engine)
    with served(LateIndex()) as engine:
        late = run(scenario("lifecycle", "coding_session"), engine)
    [fast], [slow] = quick.lags, late.lags
    assert fast.ms is not None and fast.polls == 1
    # The engine starts its delay when the write reaches it, the lag runs from the ack that
    # comes back after: on a loaded machine the reply's way back took 3.5 ms of the 500.
    reply = max(t.ms for t in late.timings if t.call == "ingest")
    assert slow.ms is not None and slow.ms + reply >= LateIndex.delay * 1000 and slow.polls > 1
    assert late.probes[0].hit, "once settled its packs are right: only the lag tells"


def test_a_lag_beyond_the_budget_is_unranked() -> None:
    with served(LateIndex()) as engine:
        result = run(
            scenario("lifecycle", "coding_session"), engine, RunOptions(settle_timeout=0.2)
        )
    [lag] = result.lags
    assert lag.ms is None
    got = values(result)
    assert got["unranked_rate"] == 1.0 and got["write_to_ranked_p50"] is None


def test_a_lag_probe_must_name_one_document(tmp_path) -> None:  # type: ignore[no-untyped-def]
    case = tmp_path / "bad.yaml"
    case.write_text(
        "kind: scenario\nname: bad\ntitle: t\nstart: 2026-01-05\n"
        "threads: [{id: t, exchanges: [{user: The door code is 5511., reply: Noted.}]}]\n"
        "probes: [{id: p, question: Door code?, style: lexical, expect: ['5511'],"
        " evidence: [t.0], lag: true}]\n"
    )
    with pytest.raises(SuiteError, match="exactly one document or learning"):
        load_file(case)
