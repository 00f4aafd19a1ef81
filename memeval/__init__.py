"""memeval: measure how AI-agent memory systems fail, in parallel, against real engines.

From Python: `memeval.evaluate(...)`, `memeval.load_run(...)`, `memeval.compare(...)` (see
`memeval.api`). They load on first use, so `import memeval` (and every `memeval` command)
stays as cheap as this file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memeval.api import compare, evaluate, load_run

__version__ = "0.1.0"
__all__ = ["compare", "evaluate", "load_run"]
_API = frozenset(__all__)


def __getattr__(name: str) -> Any:
    if name in _API:
        from memeval import api

        return getattr(api, name)
    raise AttributeError(f"module 'memeval' has no attribute {name!r}")
