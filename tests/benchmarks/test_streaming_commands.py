"""`memeval suites list` and `memeval sweep` hold a case of a benchmark file at a time, not the
file: each peaks at the same resident memory for a generated file and one five times its size.
Measured in the command's own process (a sweep's workers and Redis are other processes),
through the command a user types."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.longmemeval_gen import write
from memeval.llm.sweep import SweepReport
from tests.benchmarks.peak import peak_mb
from tests.llm.server import KEY, FakeOpenRouter

SLACK_MB = 12
"""Allocator noise and the larger file's few more small objects (ids, plan entries). Holding
the larger file's cases, as `suites list` did before it streamed them, added 28 MB (55 and 83
MB; streamed, 49 and 50 MB)."""
SMALL, LARGE = 12, 60


@pytest.fixture
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same instances, five times as many: few turns of many words, the bytes that cost
    a reader memory."""
    folder = tmp_path_factory.mktemp("files")
    small, large = folder / "small.json", folder / "large.json"
    small_bytes = write(small, instances=SMALL, sessions=12, turns=4, words=1500, seed=1)
    large_bytes = write(large, instances=LARGE, sessions=12, turns=4, words=1500, seed=1)
    assert large_bytes > 4.5 * small_bytes and large_bytes > 25e6
    return small, large


def test_suites_list_counts_a_file_five_times_larger_in_the_same_memory(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    peaks = []
    for path, n in zip(files, (SMALL, LARGE), strict=True):
        suite = f"longmemeval:{path}"
        peak, done = peak_mb(tmp_path / path.stem, "suites", "list", "--suite", suite, "--cases")
        listed = [line for line in done.stdout.splitlines() if line.endswith(str(path))]
        assert len(listed) == n, done.stdout[-2000:]
        peak_json, done = peak_mb(
            tmp_path / f"{path.stem}-json", "suites", "list", "--suite", suite, "--json", "--cases"
        )
        data = json.loads(done.stdout)
        assert data["scenarios"] == len(data["cases"]) == n
        peaks.append(max(peak, peak_json))
    print(f"suites list peak: {peaks[0]} MB ({SMALL} instances), {peaks[1]} MB ({LARGE})")
    assert peaks[1] - peaks[0] < SLACK_MB, peaks


@pytest.fixture
def server(tmp_path: Path) -> Iterator[FakeOpenRouter]:
    with FakeOpenRouter() as fake:
        yield fake


def sweep_peak_mb(path: Path, folder: Path, server: FakeOpenRouter) -> tuple[int, SweepReport]:
    """The `memeval sweep` process's peak resident MB on the embedded farm, and its report."""
    report = folder / "sweep.json"
    peak, _ = peak_mb(
        folder, "sweep", "--models", "test/cheap,test/dear", "--budget-usd", "50",
        "--suite", f"longmemeval:{path}", "--workers", "2", "--base-url", server.base_url,
        "--json", str(report),
        env={"MEMEVAL_DATABASE_URL": f"sqlite:///{folder / 'runs.db'}",
             "MEMEVAL_DISPATCH_WINDOW": "8", "OPENROUTER_API_KEY": KEY,
             "MEMEVAL_CACHE_DIR": str(folder / "cache")},
    )  # fmt: skip
    return peak, SweepReport.model_validate_json(report.read_text())


SWEPT = 24
"""Instances of both sweep files: past the cases (times samples) at which the comparison's
resampling blocks reach their fixed size (`resampling.BLOCK`), so both sweeps pay the same."""


def test_a_sweep_of_a_file_five_times_larger_costs_its_dispatcher_no_more_memory(
    tmp_path: Path, server: FakeOpenRouter
) -> None:
    """The file grows by the words of its turns, not by its number of cases: a sweep's
    report and comparison grow with the cases it ran (a bounded few MB), not with the file.
    Holding the larger file's cases, as the sweep did before it streamed them, added 19 MB
    (138 and 157 MB; streamed, 144 and 143 MB)."""
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    small_bytes = write(small, instances=SWEPT, sessions=12, turns=4, words=700, seed=1)
    large_bytes = write(large, instances=SWEPT, sessions=12, turns=4, words=3500, seed=1)
    assert large_bytes > 4.5 * small_bytes and large_bytes > 25e6
    rss_small, report_small = sweep_peak_mb(small, tmp_path / "small", server)
    rss_large, report_large = sweep_peak_mb(large, tmp_path / "large", server)
    for report in (report_small, report_large):
        assert report.done == report.planned == 2 * SWEPT and report.coverage == 1.0
    print(f"sweep dispatcher peak: {rss_small} MB ({small_bytes / 1e6:.0f} MB file), "
          f"{rss_large} MB ({large_bytes / 1e6:.0f} MB file)")  # fmt: skip
    assert rss_large - rss_small < SLACK_MB, (rss_small, rss_large)
