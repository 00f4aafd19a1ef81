"""A test-only engine: `bm25` whose process dies the way a native library's crash kills it.

Before writing a tenant's history it looks in the folder `LOCOMO_CRASH_DIR` names for a file
named after the tenant: `TENANT.always` kills the process every time, `TENANT.once` is removed
and then kills it, so a second try runs through. The signal is SIGSEGV, what Kuzu's crash
raised; nothing is caught or printed first.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from memeval.engines.bm25 import BM25Engine
from memeval.engines.types import Turn


class CrashingEngine(BM25Engine):
    async def write_history(
        self, tenant: str, agent: str, thread: str, turns: list[Turn]
    ) -> list[str]:
        folder = Path(os.environ["LOCOMO_CRASH_DIR"])
        once = folder / f"{tenant}.once"
        if once.exists():
            once.unlink()
            os.kill(os.getpid(), signal.SIGSEGV)
        if (folder / f"{tenant}.always").exists():
            os.kill(os.getpid(), signal.SIGSEGV)
        return await super().write_history(tenant, agent, thread, turns)
