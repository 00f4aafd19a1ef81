"""The LoCoMo importer on a small file of its shape, and on the development copy where present."""

from __future__ import annotations

import copy
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memeval.errors import SuiteError
from memeval.importers import locomo, sources
from memeval.importers.pinning import check_pins, sha256_of
from memeval.suites.catalog import resolve
from tests.benchmarks.samples import LOCOMO, write

DEV5 = Path(__file__).resolve().parents[3] / "shared/benchmarks/locomo/locomo-dev5.json"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return write(tmp_path, "locomo-sample.json", LOCOMO)


def test_a_conversation_becomes_one_scenario_of_bulk_sessions(sample: Path):
    (scenario,) = [locomo.scenario(c) for c in locomo.read(sample)]
    assert scenario.name == "locomo-conv-x1" and not scenario.log_probes
    first, second = scenario.threads
    assert first.bulk and second.bulk
    lines = first.lines(scenario.thread_start(first))
    assert lines[0].at == datetime(2024, 3, 3, 9, 5, tzinfo=UTC)
    assert [(x.id, x.speaker) for x in lines] == [
        ("D1-1", "Ines"),
        ("D1-2", "Tobiah"),
        ("D1-3", "Ines"),
    ]
    assert all(x.role == "user" for x in lines)  # two people talking: neither is the agent
    photo = second.lines(scenario.thread_start(second))[0]
    assert photo.at == datetime(2024, 3, 20, 18, 40, tzinfo=UTC)
    assert "[shared a photo of a wooden boat on a trailer]" in photo.text


def test_questions_become_tagged_probes_with_evidence_and_abstention(sample: Path):
    probes = locomo.scenario(locomo.read(sample)[0]).probes
    single, temporal, multi, adversarial = probes
    assert single.expect == ["a rowing boat"] and single.answer == "a rowing boat"
    assert single.evidence == ["D1-2"] and single.tags == ["category:single-hop", "audit:gold-kept"]
    assert temporal.tags == ["category:temporal", "audit:gold-kept"]
    assert multi.expect == ["2024"]  # a number answer is read as its text
    assert multi.evidence == ["D2-2", "D2-1"]  # "D2:2; D2:1" split; D9:9 names no turn
    assert multi.tags == ["category:multi-hop", "audit:gold-kept"]
    assert adversarial.abstain and adversarial.expect == []
    assert adversarial.tags == ["category:adversarial", "reported:apart"]  # category 5: apart


def test_an_unpinned_copy_warns_naming_both_hashes(sample: Path):
    note = check_pins(sample, locomo.PINS)
    assert note is not None
    assert sha256_of(sample) in note
    assert locomo.PINS[0].sha256 in note and "locomo10.json" in note


def test_suite_spec_resolves_and_warns_on_stderr(sample: Path, capsys):
    suite = resolve(f"locomo:{sample}")
    assert [c.case.id for c in suite.cases] == ["lifecycle/locomo-conv-x1"]
    assert "warning:" in capsys.readouterr().err
    assert sources.parse(f"{sample}") is None  # a plain path is an ordinary suite


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d[0]["conversation"].update(session_1_date_time="yesterday"), "session_1"),
        (lambda d: d[0]["qa"][0].update(category=9), "qa"),
        (
            lambda d: (
                d[0]["conversation"].pop("session_1") and d[0]["conversation"].pop("session_2")
            ),
            "conversation",
        ),
    ],
)
def test_bad_files_name_the_field(tmp_path: Path, change, field):
    data = copy.deepcopy(LOCOMO)
    change(data)
    path = write(tmp_path, "bad.json", data)
    with pytest.raises(SuiteError) as caught:
        locomo.read(path)
    assert field in caught.value.field and caught.value.exit_code == 2


def test_not_json_is_located(tmp_path: Path):
    path = tmp_path / "broken.json"
    path.write_text('[{"sample_id": ', encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        locomo.read(path)
    assert caught.value.line == 1


@pytest.mark.skipif(not DEV5.is_file(), reason=f"LoCoMo development copy absent: {DEV5}")
def test_the_development_copy_is_pinned_and_complete():
    assert check_pins(DEV5, locomo.PINS) is None
    scenarios = [locomo.scenario(c) for c in locomo.read(DEV5)]
    assert [s.name for s in scenarios] == [
        f"locomo-conv-{n}" for n in ("26", "30", "41", "42", "43")
    ]
    probes = [p for s in scenarios for p in s.probes]
    assert len(probes) == len([q for s in json.loads(DEV5.read_text()) for q in s["qa"]])
    counts = Counter(t for p in probes for t in p.tags)
    assert counts["category:adversarial"] == sum(p.abstain for p in probes) > 0
    for scenario in scenarios:
        ids = scenario.write_ids()
        assert all(set(p.evidence) <= ids for p in scenario.probes)
