"""A test-only engine: `bm25` whose process dies the way a native library's crash kills it.

Before writing a tenant's history it looks in the folder `LOCOMO_CRASH_DIR` names for a file
named after the tenant: `TENANT.always` kills the process every time, `TENANT.once` is removed
and then kills it, so a second try runs through, `TENANT.slow` sleeps a minute first (a run to
interrupt). The signal is SIGSEGV, what Kuzu's crash raised; nothing is caught or printed
first. Before dying it leaves a file in the temporary folder, as an engine's store would be
left, and writes that file's path to `TENANT.left`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
from pathlib import Path

from memeval.engines.bm25 import BM25Engine
from memeval.engines.types import Turn


def die(folder: Path, tenant: str) -> None:
    left = Path(tempfile.mkdtemp(prefix="memeval-crashing-")) / "store"
    left.write_text("left by a crash", encoding="utf-8")
    (folder / f"{tenant}.left").write_text(str(left), encoding="utf-8")
    os.kill(os.getpid(), signal.SIGSEGV)


class CrashingEngine(BM25Engine):
    async def write_history(
        self, tenant: str, agent: str, thread: str, turns: list[Turn]
    ) -> list[str]:
        folder = Path(os.environ["LOCOMO_CRASH_DIR"])
        if (folder / f"{tenant}.slow").exists():
            await asyncio.sleep(60)
        once = folder / f"{tenant}.once"
        if once.exists():
            once.unlink()
            die(folder, tenant)
        if (folder / f"{tenant}.always").exists():
            die(folder, tenant)
        return await super().write_history(tenant, agent, thread, turns)
