"""A run's dispatcher holds a window of cases, not the suite: `memeval run --suite
longmemeval:PATH` on the embedded farm peaks at the same resident memory for a generated file
and one five times its size. Measured in the `memeval run` process itself (its workers and
Redis are other processes), through the same command a user types."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.longmemeval_gen import write
from tests.benchmarks.peak import peak_mb

WINDOW = "8"
"""Both files hold more cases than this, so both runs hold the same few case bodies at once."""
SLACK_MB = 20
"""Allocator noise and the larger run's results, which its report holds at the end (the peak
comes there, after the last case lands): 6 MB here (129 and 135 MB), as the process's own
`VmHWM`. The case bodies are made large (3,000 words a turn) so that holding them would show
far above that: the larger file is 58 MB, and a dispatcher that held its cases, as it did
before it streamed them, grew by 29 MB on a file half this size."""


def dispatcher_peak_mb(path: Path, folder: Path) -> tuple[int, int]:
    """The `memeval run` process's peak resident MB, and the cases done."""
    peak, _ = peak_mb(
        folder, "run", "--suite", f"longmemeval:{path}", "--engine", "reference",
        "--workers", "2", "--out", str(folder / "out"),
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{folder / 'runs.db'}",
             "MEMEVAL_DISPATCH_WINDOW": WINDOW},
    )  # fmt: skip
    report = json.loads((folder / "out" / "report.json").read_text())
    return peak, sum(c["status"] == "done" for c in report["cases"])


def test_a_file_five_times_larger_costs_the_dispatcher_no_more_memory(tmp_path: Path) -> None:
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    # Few turns of many words: the bytes that cost a dispatcher memory, without the thousands
    # of engine calls per case that would make the test slow.
    small_bytes = write(small, instances=12, sessions=12, turns=4, words=3000, seed=1)
    large_bytes = write(large, instances=60, sessions=12, turns=4, words=3000, seed=1)
    assert large_bytes > 4.5 * small_bytes and large_bytes > 50e6
    rss_small, done_small = dispatcher_peak_mb(small, tmp_path / "small")
    rss_large, done_large = dispatcher_peak_mb(large, tmp_path / "large")
    assert (done_small, done_large) == (12, 60)
    print(f"dispatcher peak: {rss_small} MB ({small_bytes / 1e6:.0f} MB file), "
          f"{rss_large} MB ({large_bytes / 1e6:.0f} MB file)")  # fmt: skip
    assert rss_large - rss_small < SLACK_MB, (
        f"{small_bytes / 1e6:.0f} MB run at a {rss_small} MB dispatcher peak, "
        f"{large_bytes / 1e6:.0f} MB at {rss_large} MB"
    )
