"""`memeval suites list` holds a case of a benchmark file at a time, not the file: it peaks at
the same resident memory for a generated file and one five times its size, measured in its own
process, through the command a user types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.longmemeval_gen import write
from tests.benchmarks.peak import peak_mb

SLACK_MB = 12
"""Allocator noise and the larger file's few hundred more small objects (ids, plan entries).
Holding the larger file's cases, as both commands did before they streamed them, adds about
30 MB: a `Scenario` of these instances is about 0.6 MB."""
SMALL, LARGE = 12, 60


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Few turns of many words: the bytes that cost a reader memory, without the thousands of
    engine calls per case that would make a sweep slow."""
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
