"""The bm25 baseline: BM25 ranking over every write, packs in score order, nothing else."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memeval.engines.bm25 import BUDGET_TOKENS, BM25Engine
from memeval.engines.pack import CHARS_PER_TOKEN
from memeval.engines.registry import create
from memeval.engines.types import Capability, MemoryItem, Turn, TurnContext
from memeval.errors import Unsupported
from tests.engines.helpers import day, fact, run


def units(markdown: str) -> list[str]:
    return [line[2:] for line in markdown.splitlines() if line.startswith("- ")]


def test_registered_with_honest_capabilities():
    engine = create("bm25")
    assert isinstance(engine, BM25Engine)
    assert engine.capabilities == {Capability.store, Capability.lifecycle}
    for call in (
        engine.query_at("t", "x", day(1)),
        engine.conflicts("t", "a"),
        engine.build_beliefs("t"),
        engine.compile_context("t", "a", "x", day(1)),
    ):
        with pytest.raises(Unsupported):
            run(call)


def test_fixture_face_ranks_rare_terms_first_and_drops_non_matches():
    engine = BM25Engine()
    run(engine.store("t", fact("a", "The ferry to Harwick leaves at noon.")))
    run(engine.store("t", fact("b", "The ferry is painted blue and the ferry is old.")))
    run(engine.store("t", fact("c", "Lunch is soup.")))
    result = run(engine.query("t", "when does the Harwick ferry leave"))
    texts = [h.text for h in result.hits]
    assert texts[0] == "The ferry to Harwick leaves at noon."
    assert "Lunch is soup." not in texts  # shares no term: BM25 scores it zero
    assert not result.abstained and result.answer is None
    assert all(h.source is None and h.valid_from is None for h in result.hits)
    assert run(engine.query("other", "ferry")).hits == []


def test_stemming_joins_inflections():
    engine = BM25Engine()
    run(engine.store("t", fact("a", "She was painting lighthouses all summer.")))
    run(engine.store("t", fact("b", "He sold the van.")))
    assert run(engine.query("t", "who paints a lighthouse")).hits[0].text.startswith("She")


def test_pack_shows_best_turns_first_with_date_and_excludes_the_prompt():
    engine = BM25Engine()
    turns = [
        Turn(role="user", text="My sister adopted a greyhound named Biscuit.", at=day(1)),
        Turn(role="assistant", text="A greyhound! Lovely.", at=day(1) + timedelta(minutes=1)),
        Turn(role="user", text="We repainted the kitchen yellow.", at=day(2)),
    ]
    for turn in turns:
        run(engine.post_turn("t", "a", "th", turn))
    asked = Turn(role="user", text="What is the greyhound called?", at=day(5))
    ctx = TurnContext(agent="a", thread="new", turn=asked, in_prompt=[turns[1]])
    shown = units(run(engine.pre_turn("t", ctx)).markdown)
    assert shown[0].startswith(f"{day(1):%Y-%m-%d %H:%M} user: My sister adopted")
    assert not any("Lovely" in u for u in shown)  # still in the prompt
    assert not any("kitchen" in u for u in shown)  # nothing in common with the question
    assert len(run(engine.list("t"))) == 4  # the asked turn is logged after the pack


def test_pack_respects_the_reference_budget():
    engine = BM25Engine()
    for i in range(300):
        text = f"Barrel {i} in the cellar stores cider pressed from orchard apples."
        run(engine.ingest("t", MemoryItem(id=f"d{i}", text=text)))
    pack = run(engine.start_session("t", "a", None, "cider barrels", day(3)))
    assert len(pack.markdown) <= BUDGET_TOKENS * CHARS_PER_TOKEN
    assert len(units(pack.markdown)) > 50
    run(engine.forget("t"))
    assert run(engine.list("t")) == []
