"""The farm tests' embedded farm, reused: `memeval` in subprocesses with a private store."""

from tests.farm.conftest import farm

__all__ = ["farm"]
