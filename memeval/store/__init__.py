"""The results store: the source of truth for runs and their case results.

Celery's result backend only carries small references; everything a report or a resume needs is
read from here. One SQLite file serves a laptop; PostgreSQL serves a fleet.
"""

from memeval.secrets import scrub_secrets
from memeval.store.models import (
    CaseKey,
    PlannedCase,
    RunMatch,
    RunRecord,
    RunStatus,
    UnknownRun,
)
from memeval.store.repo import LATEST, Store, open_store
from memeval.store.settings import StoreSettings, database_url

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
