"""The results store: the source of truth for runs and their case results.

Celery's result backend only carries small references; everything a report or a resume needs is
read from here. One SQLite file serves a laptop; PostgreSQL serves a fleet.

Names load on first use (PEP 562): `memeval runs` reads the store through `listing` alone, and
importing `repo` would cost it SQLAlchemy and SQLModel.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memeval.errors import UnknownRun
    from memeval.secrets import scrub_secrets
    from memeval.store.models import (
        CaseKey,
        PlannedCase,
        RunMatch,
        RunRecord,
        RunStatus,
    )
    from memeval.store.repo import LATEST, Store, open_store
    from memeval.store.settings import StoreSettings, database_url

_HOMES = {
    "scrub_secrets": "memeval.secrets",
    "UnknownRun": "memeval.errors",
    **dict.fromkeys(
        ("CaseKey", "PlannedCase", "RunMatch", "RunRecord", "RunStatus"),
        "memeval.store.models",
    ),
    **dict.fromkeys(("LATEST", "Store", "open_store"), "memeval.store.repo"),
    **dict.fromkeys(("StoreSettings", "database_url"), "memeval.store.settings"),
}

__all__ = [
    "LATEST",
    "CaseKey",
    "PlannedCase",
    "RunMatch",
    "RunRecord",
    "RunStatus",
    "Store",
    "StoreSettings",
    "UnknownRun",
    "database_url",
    "open_store",
    "scrub_secrets",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
