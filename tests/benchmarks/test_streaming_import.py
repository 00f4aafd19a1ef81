"""Benchmark files are read one instance at a time: an import's memory does not grow with the
file. Measured as peak resident memory of a fresh interpreter reading a generated LongMemEval
file and one five times its size, through the same path `--suite longmemeval:PATH` and
`memeval suites import` take (`memeval.importers.sources.load`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.longmemeval_gen import write
from benchmarks.scale_run import OWN_PEAK
from memeval.errors import SuiteError
from memeval.importers import sources
from tests.conftest import run_cli

READ = (
    OWN_PEAK
    + """
import sys
from pathlib import Path
from memeval.importers import sources
count = sum(1 for _ in sources.load("longmemeval", Path(sys.argv[1])))
print(count, own_peak_mb())
"""
)
SLACK_MB = 40
"""What may differ between the two reads: allocator noise and one instance's objects, never
the four extra files' worth that a whole-file parse would hold (well over 100 MB here)."""


def peak_mb(path: Path) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", READ, str(path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    count, peak = done.stdout.split()
    return int(count), int(peak)


def test_a_file_five_times_larger_costs_no_more_memory(tmp_path: Path) -> None:
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    small_bytes = write(small, instances=12, sessions=48, turns=10, words=150, seed=1)
    large_bytes = write(large, instances=60, sessions=48, turns=10, words=150, seed=1)
    assert large_bytes > 4.5 * small_bytes and large_bytes > 25e6
    (n_small, rss_small), (n_large, rss_large) = peak_mb(small), peak_mb(large)
    assert (n_small, n_large) == (12, 60)
    assert rss_large - rss_small < SLACK_MB, (
        f"{small_bytes / 1e6:.0f} MB read at {rss_small} MB peak, "
        f"{large_bytes / 1e6:.0f} MB at {rss_large} MB"
    )


def test_a_generated_file_imports_and_its_plants_are_the_answers(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    write(path, instances=6, sessions=5, turns=4, words=10, seed=3)
    done = run_cli("suites", "import", "longmemeval", str(path), "--out", str(tmp_path / "cases"))
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "cases").glob("*.yaml"))) == 6
    cases = list(sources.load("longmemeval", path))
    answered = [c for c in cases if not c.probes[0].abstain]
    assert len(answered) == 4  # two of six are abstention questions
    for case in answered:
        planted = [
            t.text for thread in case.threads for t in thread.turns if "By the way" in t.text
        ]
        assert any(case.probes[0].expect[0] in text for text in planted)


def test_a_file_cut_short_names_the_item_it_broke_after(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    write(path, instances=3, sessions=2, turns=2, words=5, seed=1)
    text = path.read_text()
    path.write_text(text[: int(len(text) * 0.8)])
    with pytest.raises(SuiteError, match=r"not JSON after item 2"):
        list(sources.load("longmemeval", path))
