"""SIGTERM as Ctrl-C, for the commands that keep finished work on an interrupt."""

from __future__ import annotations

import signal
from types import FrameType


def stop_gently_on_sigterm() -> None:
    """`docker stop` and CI timeouts send SIGTERM: raising KeyboardInterrupt lets the command
    mark its runs interrupted and write what landed, as it does for Ctrl-C."""
    signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt
