"""The cues a write is read for: case never matters, and the fast path for ASCII text finds
exactly what the case-insensitive one finds for any other text."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memeval.engines.reference.cues import Cues, read_cues

MARKERS = (
    "always don't dont prefer instead remember failed failures errors outage crash spiked "
    "anomalous unexpectedly alert first time 47x 3.5x now for updated change of plan moved "
    "no longer corrected anymore going forward i'm im i am my name i work my badge my manager "
    "the a deploy is was"
).split()
word = st.sampled_from(MARKERS).flatmap(
    lambda w: st.sampled_from([w, w.upper(), w.capitalize(), w + "s", "x" + w])
)
text = st.lists(
    st.tuples(word, st.sampled_from([" ", "  ", ", ", ". ", "-", "'", "\n", ""])),
    min_size=1,
    max_size=12,
).map(lambda parts: "".join(w + sep for w, sep in parts))

NON_ASCII = " \u00e9"  # a word on its own: it moves no boundary and holds no marker


def marks(cues: Cues) -> dict[str, bool]:
    return {k: v for k, v in dataclasses.asdict(cues).items() if k != "question"}


@settings(max_examples=300, deadline=None)
@given(text=text)
def test_ascii_text_is_read_as_any_other_text_is(text: str) -> None:
    assert text.isascii()
    assert marks(read_cues(text)) == marks(read_cues(text + NON_ASCII))


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("The deploy FAILED twice", "alarm", True),
        ("Latency spiked 47X overnight", "alarm", True),
        ("The deploy failedx", "alarm", False),
        ("NOW the limit is 40", "change", True),
        ("Keep it FOR NOW", "change", False),
        ("For now it is 40, but now it is 50", "change", True),
        ("I'M the on-call lead", "personal", True),
        ("Don't page me at night", "directive", True),
        ("Ünïcode team: the build FAILED", "alarm", True),
        ("Ünïcode team: we wait for NOW", "change", False),
    ],
)
def test_markers_ignore_case(text: str, field: str, expected: bool) -> None:
    assert getattr(read_cues(text), field) is expected
