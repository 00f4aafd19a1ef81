"""Over the served MiniLM embedder, mem0-oss finds a fact by its meaning: a question sharing no
word with it still brings it back first, with raw turns (`infer=false`) and with the stand-in
extraction (`infer=true`). (graphiti keeps only cosine matches above 0.6, its own default,
which MiniLM's paraphrase scores rarely reach: this pair scores 0.48.)"""

from __future__ import annotations

import asyncio

import pytest

from memeval.engines.types import Assertion
from tests.oss.engines import engine_at

FACTS = [
    "My sister adopted a greyhound named Biscuit.",
    "The ferry to Harwick leaves at noon.",
    "Quarterly taxes are due in April.",
]
PARAPHRASE = "Which animal joined her family?"  # no word in common with the first fact


@pytest.mark.parametrize("name", ["mem0-oss?infer=false", "mem0-oss?infer=true"])
def test_a_paraphrase_finds_its_fact_first(name, model_url, tmp_path):
    engine = engine_at(name, model_url, str(tmp_path))

    async def go() -> list[str]:
        try:
            for i, text in enumerate(FACTS):
                await engine.store("t", Assertion(id=f"f{i}", text=text, source="notes"))
            return [h.text for h in (await engine.query("t", PARAPHRASE, k=3)).hits]
        finally:
            await engine.close()

    found = asyncio.run(go())
    assert found and "greyhound" in found[0], found
