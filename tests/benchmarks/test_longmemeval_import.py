"""The LongMemEval importer on a small file in its published shape."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memeval.errors import SuiteError
from memeval.importers import longmemeval, sources
from tests.benchmarks.samples import LONGMEMEVAL, write


def scenarios(path: Path):
    return [longmemeval.scenario(i, path, n) for n, i in enumerate(longmemeval.read(path))]


def test_each_instance_is_a_scenario_over_its_own_dated_haystack(tmp_path: Path):
    path = write(tmp_path, "lme.json", LONGMEMEVAL)
    first, second = scenarios(path)
    assert first.name == "longmemeval-q-travel-1"
    assert first.now == datetime(2024, 2, 10, 18, 0, tzinfo=UTC)
    soup, cousin = first.threads
    assert soup.bulk and cousin.bulk
    assert cousin.lines(first.thread_start(cousin))[0].at == datetime(
        2024, 1, 20, 14, 15, tzinfo=UTC
    )
    assert [x.role for x in soup.lines(first.thread_start(soup))] == ["user", "assistant"]
    (probe,) = first.probes
    assert probe.expect == ["Tampere"] and probe.tags == ["category:single-session-user"]
    assert probe.evidence == ["answer_a1.0"]  # the turn marked has_answer, not its whole session
    (abstain,) = second.probes
    assert abstain.abstain and abstain.expect == []
    assert abstain.evidence == ["answer_b2.0"]  # no turn marked: the whole answer session


def test_unpinned_file_warns_with_its_hash(tmp_path: Path):
    path = write(tmp_path, "lme.json", LONGMEMEVAL)
    note = sources.warning("longmemeval", path)
    assert note is not None and "no pinned sha256" in note


def test_mismatched_lengths_are_an_error_naming_the_field(tmp_path: Path):
    data = copy.deepcopy(LONGMEMEVAL)
    data[0]["haystack_dates"].pop()
    with pytest.raises(SuiteError) as caught:
        scenarios(write(tmp_path, "lme.json", data))
    assert caught.value.field == "0.haystack_sessions"


def test_a_bad_date_names_its_place(tmp_path: Path):
    data = copy.deepcopy(LONGMEMEVAL)
    data[1]["question_date"] = "10 Feb 2024"
    with pytest.raises(SuiteError) as caught:
        scenarios(write(tmp_path, "lme.json", data))
    assert caught.value.field == "1.question_date"
