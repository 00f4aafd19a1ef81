"""The dispatcher keeps the collector off what it held before a run, and only for the run."""

from __future__ import annotations

import gc

import pytest

from memeval_farm.farm import long_lived


class Boom(Exception):
    pass


def test_a_run_freezes_the_heap_it_started_with_and_thaws_it_even_when_it_fails() -> None:
    assert gc.get_freeze_count() == 0
    held = [object() for _ in range(1000)]
    with pytest.raises(Boom), long_lived():
        assert gc.get_freeze_count() >= len(held)
        raise Boom
    assert gc.get_freeze_count() == 0
