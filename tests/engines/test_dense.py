"""The dense and hybrid baselines: MiniLM cosine over every write, and BM25 fused with it by
reciprocal rank; bm25's units, packs and budget; tenants apart, also over memeval's protocol."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from pydantic import SecretStr

from memeval.conformance import Verdict, check
from memeval.embeddings.weights import MODEL
from memeval.engines.bm25 import BUDGET_TOKENS, BM25Engine
from memeval.engines.dense import DenseEngine
from memeval.engines.hybrid import HybridEngine, fuse
from memeval.engines.pack import CHARS_PER_TOKEN
from memeval.engines.registry import create, describe
from memeval.engines.types import Capability, MemoryItem, Turn, TurnContext
from tests.adapters.conftest import TOKEN, served
from tests.engines.helpers import day, fact, run

PET = "My sister adopted a greyhound named Biscuit."
NOTES = [
    PET,
    "The ferry to Harwick leaves at noon.",
    "We repainted the kitchen yellow.",
    "Quarterly taxes are due in April.",
]
PARAPHRASE = "Which animal joined her family?"  # no word in common with PET


def units(markdown: str) -> list[str]:
    return [line[2:] for line in markdown.splitlines() if line.startswith("- ")]


def stocked(engine: BM25Engine, tenant: str = "t") -> BM25Engine:
    for i, text in enumerate(NOTES):
        run(engine.store(tenant, fact(f"n{i}", text)))
    return engine


@pytest.mark.parametrize("name", ["dense", "hybrid"])
def test_registered_like_bm25_and_naming_the_embedder(name):
    engine = create(name)
    assert isinstance(engine, DenseEngine | HybridEngine)
    assert engine.capabilities == {Capability.store, Capability.lifecycle}
    listed = {row.name: row for row in describe()}[name]
    assert any(MODEL in note for note in listed.notes)


def test_dense_finds_a_paraphrase_that_bm25_cannot():
    assert run(stocked(BM25Engine()).query("t", PARAPHRASE)).hits == []
    hits = run(stocked(DenseEngine()).query("t", PARAPHRASE, k=4)).hits
    assert hits[0].text == PET
    assert len(hits) == 4 and hits[0].score > hits[1].score  # every unit ranked, none dropped


def test_hybrid_puts_what_both_rankings_find_above_what_one_finds():
    engine = stocked(HybridEngine())
    hits = run(engine.query("t", "Which animal did my sister take in?", k=4)).hits
    assert hits[0].text == PET  # bm25 (sister) and dense (animal) agree
    assert run(engine.query("t", PARAPHRASE)).hits[0].text == PET  # dense alone still counts


def test_fusion_adds_reciprocal_ranks():
    fused = fuse([(0, 9.0), (1, 5.0)], [(1, 0.9), (2, 0.8), (0, 0.1)])
    assert [unit for unit, _ in fused] == [1, 0, 2]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)


@pytest.mark.parametrize("cls", [DenseEngine, HybridEngine])
def test_pack_leaves_out_the_prompt_and_keeps_the_budget(cls):
    engine = cls()
    turns = [
        Turn(role="user", text=PET, at=day(1)),
        Turn(role="assistant", text="A greyhound! Lovely.", at=day(1) + timedelta(minutes=1)),
    ]
    run(engine.write_history("t", "a", "th", turns))
    for i in range(200):
        text = f"Barrel {i} in the cellar stores cider pressed from orchard apples."
        run(engine.ingest("t", MemoryItem(id=f"d{i}", text=text)))
    asked = Turn(role="user", text="What is the dog called?", at=day(5))
    ctx = TurnContext(agent="a", thread="new", turn=asked, in_prompt=[turns[1]])
    pack = run(engine.pre_turn("t", ctx))
    shown = units(pack.markdown)
    assert shown[0].startswith(f"{day(1):%Y-%m-%d %H:%M} user: {PET}")
    assert not any("Lovely" in u for u in shown)
    assert len(pack.markdown) <= BUDGET_TOKENS * CHARS_PER_TOKEN
    assert pack.unit_ids is not None and len(pack.unit_ids) == len(shown)


@pytest.mark.parametrize("cls", [DenseEngine, HybridEngine])
def test_tenants_are_apart_and_forget_touches_one(cls):
    engine = stocked(cls(), "a")
    run(engine.store("b", fact("x", "The lighthouse keeper's name is Orla.")))
    seen_by_b = [h.text for h in run(engine.query("b", PARAPHRASE, k=10)).hits]
    assert seen_by_b == ["The lighthouse keeper's name is Orla."]
    run(engine.forget("a"))
    assert run(engine.list("a")) == [] and run(engine.query("a", PARAPHRASE)).hits == []
    assert len(run(engine.list("b"))) == 1


@pytest.fixture(params=[DenseEngine, HybridEngine])
def engine_url(request) -> Iterator[str]:
    yield from served(request.param())


def test_served_over_memevals_protocol_they_conform(engine_url):
    found = {c.name: c.verdict for c in run(check(engine_url, SecretStr(TOKEN), timeout=30))}
    assert set(found.values()) == {Verdict.passed}, found
    assert len(found) == 8
