"""What the in-process engines over a library whose writes are LLM extractions share.

Such a library turns one write into none, one or several memories and keeps no note of the
write they came from, while memeval's settle rule counts writes. The ledger keeps, per tenant,
the memory ids each write produced, as the library returned them: a write is listed while any
of its memories is still in the library's store (or when the library kept nothing from it), so
`list` follows what the library holds, not what memeval sent.
"""

from __future__ import annotations

from collections.abc import Iterable

from memeval.errors import EngineUnavailable


class Ledger:
    def __init__(self) -> None:
        self._writes: dict[str, dict[str, frozenset[str]]] = {}

    def record(self, tenant: str, write: str, ids: Iterable[str]) -> None:
        self._writes.setdefault(tenant, {})[write] = frozenset(ids)

    def visible(self, tenant: str, present: Iterable[str]) -> list[str]:
        held = set(present)
        writes = self._writes.get(tenant, {})
        return sorted(w for w, ids in writes.items() if not ids or ids & held)

    def drop(self, tenant: str) -> None:
        self._writes.pop(tenant, None)


def model_service_down(engine: str, exc: BaseException) -> EngineUnavailable | None:
    """The model service gone away, anywhere in `exc`'s causes: infrastructure (the case is
    retried), where anything else the library raises is its own failure (scored)."""
    import openai

    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, openai.APIConnectionError | openai.InternalServerError):
            return EngineUnavailable(f"{engine}: model service: {cause}")
        cause = cause.__cause__ or cause.__context__
    return None
