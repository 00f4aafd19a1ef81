"""Loaded by every Python process the farm tests start (it is on their PYTHONPATH): teaches
the engine registry the test engines, in the CLI and in each worker alike.

The registry will load `package.module:Class` engines itself (the adapters issue); until then
this wraps its public `create`.
"""

from memeval.engines import registry
from tests.farm.engines import ENGINES

_create = registry.create


def create(name: str) -> registry.Engine:
    engine = ENGINES.get(name)
    return engine() if engine is not None else _create(name)


registry.create = create
