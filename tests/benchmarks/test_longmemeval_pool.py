"""`benchmarks.longmemeval_gen --pool N` draws filler sessions from one seeded pool, as the
published LongMemEval files do, so texts repeat across instances: an embedding cache keyed by
text then computes about N x turns vectors for the whole file. Without it every filler text is
new (the default, unchanged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.longmemeval_gen import write
from memeval.importers import sources
from tests.conftest import ROOT


def fillers(path: Path) -> list[list[str]]:
    """Each instance's filler texts (the planted turns left out)."""
    return [
        [
            turn["content"]
            for session in instance["haystack_sessions"]
            for turn in session
            if not turn.get("has_answer")
        ]
        for instance in json.loads(path.read_text())
    ]


def test_a_pooled_file_repeats_its_sessions_across_instances(tmp_path):
    path = tmp_path / "pooled.json"
    write(path, instances=30, sessions=6, turns=4, words=12, seed=5, pool=10)
    texts = fillers(path)
    assert len({t for each in texts for t in each}) <= 10 * 4  # the pool's texts, no more
    assert sum(map(len, texts)) > 4 * 10 * 4  # drawn many times over
    for instance in json.loads(path.read_text()):
        ids = instance["haystack_session_ids"]
        assert len(set(ids)) == len(ids) == 6  # no session twice in one haystack
        # A planted session is this instance's own copy, under an id of its own.
        assert all(a.startswith("gen_") and a in ids for a in instance["answer_session_ids"])
    cases = list(sources.load("longmemeval", path))
    assert len(cases) == 30
    answered = [c for c in cases if not c.probes[0].abstain]
    assert answered and all(c.probes[0].evidence for c in answered)


def test_without_a_pool_no_filler_text_repeats_and_the_same_seed_gives_the_same_file(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    write(first, instances=8, sessions=5, turns=4, words=12, seed=5)
    write(second, instances=8, sessions=5, turns=4, words=12, seed=5)
    texts = [t for each in fillers(first) for t in each]
    assert len(set(texts)) == len(texts) == 8 * 5 * 4 - sum(
        1 for i in json.loads(first.read_text()) for s in i["haystack_sessions"] for t in s
        if t.get("has_answer")
    )  # fmt: skip
    assert first.read_bytes() == second.read_bytes()


def test_a_pool_smaller_than_a_haystack_is_refused_with_the_reason(tmp_path):
    out = tmp_path / "x.json"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.longmemeval_gen", "--out", str(out),
         "--sessions", "6", "--pool", "4"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--pool 4 is smaller than --sessions 6" in done.stderr
    assert not out.exists()
