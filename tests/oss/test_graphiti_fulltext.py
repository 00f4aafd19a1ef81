"""graphiti's full-text search on Kuzu reads a question's words as words: Kuzu 0.11 takes `*`
and `?` as wildcards, so the last word of "Where is the ...?" became a pattern that missed its
own term, and sent the query down Kuzu's pattern path, which fails at random with
`unordered_map::at` (the error seen before the segfault on LoCoMo's development split)."""

from __future__ import annotations

import asyncio
import secrets
import string

import pytest

from memeval.engines.adapters.graphiti import GraphitiEngine, group_id
from memeval.engines.types import Assertion
from tests.oss.engines import engine_at


@pytest.mark.parametrize("ending", ["?", "?!", "*?"])
def test_a_question_mark_is_not_a_wildcard(ending, model_url, tmp_path):
    from graphiti_core.search.search_filters import SearchFilters
    from graphiti_core.search.search_utils import episode_fulltext_search

    engine = engine_at("graphiti", model_url, str(tmp_path))
    assert isinstance(engine, GraphitiEngine)
    # letters only: Kuzu's tokenizer splits a word at digits
    mark = "zq" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(8))

    async def go() -> list[str]:
        try:
            text = f"The spare key hangs behind the {mark}."
            await engine.store("t", Assertion(id="key", text=text, source="notes"))
            graph = await engine._open("t")
            found = await episode_fulltext_search(
                graph.driver, f"Where is the {mark}{ending}", SearchFilters(), [group_id("t")]
            )
            return [e.content for e in found]
        finally:
            await engine.close()

    assert asyncio.run(go()) == [f"The spare key hangs behind the {mark}."]
