"""The dense and hybrid baselines: MiniLM cosine over every write, and BM25 fused with it by
reciprocal rank; bm25's units, packs and budget; tenants apart, also over memeval's protocol;
the embedder a setting (the int8 tier by default, `?embedder=minilm` the float32 model), on
every path a reference takes, and refused with its choices when it names no embedder."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from pydantic import SecretStr

from memeval import embeddings
from memeval.conformance import Verdict, check
from memeval.embeddings.weights import INT8_MODEL, MODEL
from memeval.engines.bm25 import BUDGET_TOKENS, BM25Engine
from memeval.engines.dense import DenseEngine
from memeval.engines.hybrid import HybridEngine, fuse
from memeval.engines.pack import CHARS_PER_TOKEN
from memeval.engines.registry import create, describe, models_of, validate
from memeval.engines.types import Capability, MemoryItem, Turn, TurnContext
from memeval.errors import UsageError
from memeval.store import open_store
from tests.adapters.conftest import TOKEN, served
from tests.conftest import run_cli
from tests.engines.helpers import day, fact, run

PET = "My sister adopted a greyhound named Biscuit."
NOTES = [
    PET,
    "The ferry to Harwick leaves at noon.",
    "We repainted the kitchen yellow.",
    "Quarterly taxes are due in April.",
]
PARAPHRASE = "Which animal joined her family?"  # no word in common with PET
# Each engine on each MiniLM tier, as a user names it.
REFERENCES = ["dense", "hybrid", "dense?embedder=minilm", "hybrid?embedder=minilm"]


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


@pytest.mark.parametrize("name", REFERENCES)
def test_tenants_are_apart_and_forget_touches_one(name):
    engine = stocked(create(name), "a")
    run(engine.store("b", fact("x", "The lighthouse keeper's name is Orla.")))
    seen_by_b = [h.text for h in run(engine.query("b", PARAPHRASE, k=10)).hits]
    assert seen_by_b == ["The lighthouse keeper's name is Orla."]
    run(engine.forget("a"))
    assert run(engine.list("a")) == [] and run(engine.query("a", PARAPHRASE)).hits == []
    assert len(run(engine.list("b"))) == 1


@pytest.fixture(params=REFERENCES)
def engine_url(request) -> Iterator[str]:
    yield from served(create(request.param))


def test_served_over_memevals_protocol_they_conform(engine_url):
    found = {c.name: c.verdict for c in run(check(engine_url, SecretStr(TOKEN), timeout=30))}
    assert set(found.values()) == {Verdict.passed}, found
    assert len(found) == 8


@pytest.mark.parametrize("name", ["dense", "hybrid"])
def test_the_embedder_is_a_setting_the_int8_tier_by_default(name):
    assert create(name).settings.embedder == embeddings.DEFAULT == "minilm-int8"
    assert models_of(name) == [f"embeddings {INT8_MODEL}, in-process"]
    assert models_of(f"{name}?embedder=minilm") == [f"embeddings {MODEL}, in-process"]
    listed = {row.name: row for row in describe()}[name]
    (setting,) = listed.settings
    assert (setting.option, setting.default) == ("embedder", "minilm-int8")
    assert setting.env == f"{name.upper()}_EMBEDDER"


@pytest.mark.parametrize("tier", ["minilm", "minilm-int8"])
def test_dense_scores_are_the_cosines_of_the_tier_it_is_set_to(tier):
    """A dense hit's score is the cosine of the chosen tier's vectors, which differ between
    the tiers in the third decimal: the setting reaches the vectors, not only the label."""
    engine = stocked(create(f"dense?embedder={tier}"))
    hit = run(engine.query("t", PARAPHRASE, k=1)).hits[0]
    own = embeddings.load(tier).embed([PARAPHRASE, PET])
    exact = embeddings.load("minilm").embed([PARAPHRASE, PET])
    fast = embeddings.load("minilm-int8").embed([PARAPHRASE, PET])
    assert hit.text == PET
    assert hit.score == pytest.approx(float(own[0] @ own[1]), abs=1e-5)
    assert float(exact[0] @ exact[1]) != pytest.approx(float(fast[0] @ fast[1]), abs=1e-4)


def test_the_setting_comes_from_the_environment_too(monkeypatch):
    monkeypatch.setenv("HYBRID_EMBEDDER", "minilm")
    assert models_of("hybrid") == [f"embeddings {MODEL}, in-process"]
    assert models_of("dense") == [f"embeddings {INT8_MODEL}, in-process"]  # its own variable


@pytest.mark.parametrize("check_only", [False, True])
def test_an_unknown_embedder_is_refused_naming_the_setting_and_the_choices(check_only):
    with pytest.raises(UsageError) as caught:
        (validate if check_only else create)("hybrid?embedder=minilm-fp16")
    assert "`embedder`" in caught.value.message and "minilm-fp16" in caught.value.message
    assert all(name in caught.value.message for name in embeddings.NAMES)
    assert "HYBRID_EMBEDDER" in caught.value.fix


def test_memeval_run_refuses_an_unknown_embedder_before_a_run_exists(tmp_path):
    store = f"sqlite:///{tmp_path}/store.db"
    assert open_store(store).list_runs(1) == []
    done = run_cli(
        "run", "--engine", "dense?embedder=e5", "--suite", "lifecycle",
        env={"MEMEVAL_DATABASE_URL": store}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "engine `dense`: `embedder`: `e5` is not an embedder" in done.stderr
    assert "minilm-int8, minilm" in done.stderr and "DENSE_EMBEDDER" in done.stderr
    assert open_store(store).list_runs(5) == []
