"""memeval: measure how AI-agent memory systems fail, in parallel, against real engines.

From Python: `memeval.evaluate(...)`, `memeval.resume(...)`, `memeval.sweep(...)`,
`memeval.load_run(...)` and `memeval.compare(...)` (see `memeval.api`). They load on first
use, so `import memeval` (and every `memeval` command) stays as cheap as this file, which
imports nothing, not even `typing`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; checkers read it alike
if TYPE_CHECKING:
    from memeval.api import compare, evaluate, load_run, resume, sweep

__version__ = "0.1.0"
__all__ = ["compare", "evaluate", "load_run", "resume", "sweep"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from memeval import api

        return getattr(api, name)
    raise AttributeError(f"module 'memeval' has no attribute {name!r}")
