"""The engine an API caller names: a registry reference, an `Engine` subclass or an instance.

A run record and every task message carry the engine as a reference string, because a farm's
workers build their own engine from it. A class that the workers can import is therefore as
good as its `package.module:Class` reference; a class they cannot import (one defined in a
script or a notebook) and any instance (its state cannot travel) run only in this process.
"""

from __future__ import annotations

from typing import TypeAlias

from pydantic import BaseModel, ConfigDict

from memeval.engines.base import Engine
from memeval.engines.plugins import load_class
from memeval.errors import UsageError

EngineArg: TypeAlias = str | Engine | type[Engine]


class EngineChoice(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    ref: str
    """What the run record shows, and what a worker builds the engine from."""
    local: Engine | None = None
    """The engine to run in this process when `ref` cannot build it."""


def choose_engine(engine: EngineArg, *, in_process: bool) -> EngineChoice:
    if isinstance(engine, str):
        return EngineChoice(ref=engine)
    cls = engine if isinstance(engine, type) else type(engine)
    if not issubclass(cls, Engine):
        raise UsageError(
            f"engine: {engine!r} is not a memeval engine",
            fix="pass an engine name such as `reference`, a subclass of "
            "memeval.engines.base.Engine, or an instance of one",
        )
    ref = f"{cls.__module__}:{cls.__qualname__}"
    if isinstance(engine, Engine):
        if not in_process:
            raise UsageError(
                f"engine: an instance of {ref} runs only in this process",
                fix="pass farm=None, or pass the class (importable by the workers) so each "
                "worker builds its own",
            )
        return EngineChoice(ref=ref, local=engine)
    if _importable(ref, cls):
        return EngineChoice(ref=ref)
    if not in_process:
        raise UsageError(
            f"engine: the farm's workers cannot import {ref}",
            fix="define the class in an installed module (package.module:Class), "
            "or pass farm=None to run it in this process",
        )
    return EngineChoice(ref=ref, local=_instance(cls, ref))


def _importable(ref: str, cls: type[Engine]) -> bool:
    """A worker imports `ref` in another process: `__main__` there is the worker itself."""
    if cls.__module__ == "__main__":
        return False
    try:
        return load_class(ref) is cls
    except UsageError:
        return False


def _instance(cls: type[Engine], ref: str) -> Engine:
    try:
        return cls()
    except TypeError as exc:
        raise UsageError(
            f"engine: {ref} cannot be built without arguments ({exc})",
            fix="pass an instance of it instead of the class",
        ) from None
