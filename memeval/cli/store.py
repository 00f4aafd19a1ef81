"""The results store as the commands open it: the check lives beside the run orchestration
(`memeval.evaluation.store`), which the Python API shares with the commands."""

from memeval.evaluation.store import FIX, store_error, usable_store

__all__ = ["FIX", "store_error", "usable_store"]
