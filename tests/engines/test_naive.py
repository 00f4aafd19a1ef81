"""The naive baseline: keyword overlap, always five hits, nothing else."""

from __future__ import annotations

import pytest

from memeval.engines.naive import NaiveEngine
from memeval.engines.pack import CHARS_PER_TOKEN
from memeval.engines.types import Capability, MemoryItem, Turn, TurnContext
from memeval.errors import Unsupported
from tests.engines.helpers import day, fact, run


def stocked() -> NaiveEngine:
    engine = NaiveEngine()
    for i in range(8):
        run(engine.store("t", fact(f"n{i}", f"Crate {i} holds apples from orchard {i}.")))
    run(engine.store("t", fact("pear", "The pear crate is in the cellar.", source="x")))
    return engine


def test_ranks_by_shared_words_and_keeps_only_text():
    result = run(stocked().query("t", "where is the pear crate"))
    assert result.hits[0].text == "The pear crate is in the cellar."
    hit = result.hits[0]
    assert hit.source is None and hit.span is None and hit.assertion_id is None
    assert result.answer is None and result.conflicts == []


def test_always_returns_top_five_even_without_overlap():
    result = run(stocked().query("t", "zebra quantum velvet"))
    assert len(result.hits) == 5 and not result.abstained


def test_tenants_are_separate():
    engine = stocked()
    assert run(engine.query("other", "pear crate")).hits == []


def test_unsupported_calls_raise():
    engine = stocked()
    with pytest.raises(Unsupported) as caught:
        run(engine.query_at("t", "pear", day(1)))
    assert caught.value.capability is Capability.query_at
    for call in (
        engine.conflicts("t", "n1"),
        engine.compile_context("t", "a", "Pears", day(1)),
        engine.build_beliefs("t"),
        engine.inspect("t"),
        engine.usage(),
    ):
        with pytest.raises(Unsupported):
            run(call)
    assert engine.capabilities == {Capability.store, Capability.lifecycle}


def test_packs_hold_the_top_items_in_one_section_within_budget():
    engine = NaiveEngine()
    for i in range(400):
        run(engine.ingest("t", MemoryItem(id=f"d{i}", text=f"Barrel {i} stores cider.")))
    run(engine.ingest("t", MemoryItem(id="x", text="The perry barrel is labelled green.")))
    turn = Turn(role="user", text="Which label does the perry barrel have?", at=day(1))
    pack = run(engine.pre_turn("t", TurnContext(agent="a", thread="th", turn=turn)))
    assert pack.markdown.splitlines()[3] == "- The perry barrel is labelled green."
    assert pack.markdown.count("## ") == 1
    assert len(pack.markdown) <= 1500 * CHARS_PER_TOKEN
    assert "x" in run(engine.list("t"))
    run(engine.forget("t"))
    assert run(engine.list("t")) == []
