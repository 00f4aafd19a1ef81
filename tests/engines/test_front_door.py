"""`memeval.engines` is the one import an engine author needs, and its names do not drift:
removing or renaming one breaks every engine written against it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import memeval.engines as front
from memeval import errors
from memeval.engines import base, types

EXPORTED = {
    "Assertion", "Belief", "BeliefReport", "Capability", "ConflictReport", "CreditsExhausted",
    "Derived", "Engine", "EngineRefused", "EngineUnavailable", "Hit", "HitSpan", "MemoryItem",
    "Pack", "QueryResult", "ToolCallRef", "Turn", "TurnContext", "Unsupported", "Usage", "now",
}  # fmt: skip


def test_the_front_door_exports_what_an_engine_author_needs() -> None:
    assert set(front.__all__) == EXPORTED
    assert front.Engine is base.Engine and front.Pack is types.Pack
    assert front.CreditsExhausted is errors.CreditsExhausted  # one class for engine credit
    assert all(getattr(front, name) is not None for name in EXPORTED)


def test_the_package_is_typed() -> None:
    assert (Path(front.__file__).parents[1] / "py.typed").is_file()


def test_importing_it_loads_no_farm() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys, memeval.engines; print('celery' in sys.modules)"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == "False"
