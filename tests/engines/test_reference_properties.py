"""Properties that hold for any data: no crash, isolation, the abstain contract."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from memeval.engines.reference import ReferenceEngine
from memeval.engines.reference.text import clauses, stem
from tests.engines.helpers import fact, run

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=9)
sentences = st.lists(words, min_size=1, max_size=8).map(" ".join)


@given(text=st.text(alphabet="ab .!?;\n\t\r\u00a0\u2028", max_size=40))
def test_clauses_split_as_the_plain_pattern_does(text: str) -> None:
    """`clauses` is written for speed; it must cut exactly where the readable pattern does."""
    assert clauses(text) == re.split(r"(?<=[.!?;])\s+|\n+", text)


@given(word=words)
def test_stems_are_never_empty_nor_longer(word):
    assert 0 < len(stem(word)) <= len(word)


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(sentences, min_size=1, max_size=6), question=sentences)
def test_results_keep_the_contract_and_tenants_apart(texts, question):
    engine = ReferenceEngine()
    for i, text in enumerate(texts):
        run(engine.store("mine", fact(f"f{i}", text + ".")))
    mine = run(engine.query("mine", question, k=3))
    assert len(mine.hits) <= 3
    assert (mine.answer is None) == (mine.abstained or not mine.hits)
    for hit in mine.hits:
        assert hit.assertion_id in {f"f{i}" for i in range(len(texts))} or hit.derivation
    theirs = run(engine.query("theirs", question))
    assert theirs.hits == [] and theirs.abstained
