"""Output paths, checked before any work starts: the check lives beside the run orchestration
(`memeval.evaluation.paths`), which the Python API shares with the commands."""

from memeval.evaluation.paths import check_output

__all__ = ["check_output"]
