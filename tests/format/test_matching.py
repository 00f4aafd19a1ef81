"""Matching modes: substring by default, whole words and numbers on request, case ignored."""

from __future__ import annotations

import pytest

from memeval.scoring.pack import contains
from memeval.suites.common import Match


@pytest.mark.parametrize(
    ("text", "needle", "substring", "word", "number"),
    [
        ("upgrade to 0.4.1 first", "4.1", True, True, False),
        ("upgrade to v4.1 first", "4.1", True, False, True),
        ("we shipped 4.1 today", "4.1", True, True, True),
        ("we shipped 4.1.", "4.1", True, True, True),
        ("it costs £95 a month", "£9", True, False, False),
        ("it costs £9.50 a month", "£9", True, True, False),
        ("it costs £9, billed monthly", "£9", True, True, True),
        ("about 1,500 seats", "500", True, True, False),
        ("Annual review with Ann", "ann", True, True, True),
        ("Annual review", "Ann", True, False, False),
        ("EU-WEST-2 region", "eu-west-2", True, True, True),
        ("eu-west-22 region", "eu-west-2", True, False, False),
    ],
)
def test_each_mode(text: str, needle: str, substring: bool, word: bool, number: bool) -> None:
    assert contains(text, needle) is substring
    assert contains(text, needle, Match.word) is word
    assert contains(text, needle, Match.number) is number
