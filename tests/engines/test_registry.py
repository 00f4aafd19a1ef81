"""Engines by name."""

from __future__ import annotations

import pytest

from memeval.engines.naive import NaiveEngine
from memeval.engines.reference import ReferenceEngine
from memeval.engines.registry import create, known
from memeval.errors import UsageError


def test_known_names_create_fresh_engines():
    assert isinstance(create("reference"), ReferenceEngine)
    assert isinstance(create("naive"), NaiveEngine)
    assert create("reference") is not create("reference")
    assert {"naive", "reference"} <= set(known())


def test_unknown_name_explains_the_fix():
    with pytest.raises(UsageError) as caught:
        create("refrence")
    assert "refrence" in caught.value.message
    assert "naive" in caught.value.fix and "reference" in caught.value.fix
