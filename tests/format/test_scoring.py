"""Token F1, evidence tracing, noise padding, and the published JSON Schema."""

from __future__ import annotations

import pytest

from memeval.engines.naive import NaiveEngine
from memeval.engines.types import Pack, TurnContext
from memeval.scoring.evidence import score_evidence
from memeval.scoring.kpis import kpis
from memeval.scoring.pack import contains, normalise_answer, token_f1
from memeval.suites.catalog import fixtures_root
from memeval.suites.loader import _documents, document_schema
from memeval.suites.noise import distractors
from memeval.suites.scenario import Noise
from tests.format.helpers import Recording, run, scenario


def test_f1_normalises_as_squad_and_locomo_do():
    assert normalise_answer("The Salt Road, and a map!") == ["salt", "road", "map"]
    assert token_f1("the Salt Road", ["Salt Road"]) == 1.0
    assert token_f1("Salt", ["Salt Road"]) == pytest.approx(2 / 3)
    assert token_f1("Porto", ["Lisbon", "Porto in June"]) == pytest.approx(0.5)
    assert token_f1(None, ["x"]) == 0.0
    assert token_f1("", [""]) == 1.0


def test_evidence_is_traced_by_text_or_by_the_ids_an_engine_gives():
    lines = ["- [2026-03-02] Jon: next month we read The Salt Road", "- meeting at the library"]
    evidence = {"pick": ["Next month we read The Salt Road, my pick."]}
    by_text = score_evidence(lines, None, evidence, {})
    assert by_text.found == ["pick"] and by_text.rank == 1
    by_ids = score_evidence(lines, [["other"], ["x.reply"]], {"x": ["unrelated"]}, {"x.reply": "x"})
    assert by_ids.found == ["x"] and by_ids.rank == 2
    missing = score_evidence(["- meeting at the library"], None, evidence, {})
    assert missing.found == [] and missing.rank is None


EVIDENCE = """
kind: scenario
name: evidence
title: The answer is in one turn among many
start: 2026-03-02
threads:
  - id: t
    bulk: true
    turns:
      - {text: The team lunch is at noon on Fridays.}
      - {id: vip, text: Every ticket from Harbor Freight goes straight to Priya Raman.}
      - {text: The lunch order closes at eleven.}
probes:
  - id: route
    question: Who handles tickets from Harbor Freight?
    style: lexical
    expect: [Priya]
    evidence: [vip]
    log: false
"""


def test_evidence_kpis_reward_the_write_not_the_words():
    class Misleading(NaiveEngine):
        """Says the expected name, but not from the write that holds the answer."""

        async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
            if ctx.log:
                return await super().pre_turn(tenant, ctx)
            return Pack(markdown="# Context\n- Priya likes lunch at noon on Fridays\n")

    honest = {k.name: k for k in kpis([run(scenario(EVIDENCE), NaiveEngine())])}
    lucky = {k.name: k for k in kpis([run(scenario(EVIDENCE), Misleading())])}
    assert honest["evidence_recall"].value == 1.0 and honest["evidence_mrr"].n == 2
    assert lucky["pack_hit"].value == 1.0  # substring luck
    assert lucky["evidence_recall"].value == 0.0 and lucky["evidence_mrr"].value == 0.0


def test_evidence_must_name_a_write():
    with pytest.raises(ValueError, match="unknown write ids"):
        scenario(EVIDENCE.replace("evidence: [vip]", "evidence: [nope]"))


def test_noise_pads_each_tenant_reproducibly_and_never_holds_a_probe_string():
    padded = scenario(EVIDENCE + "noise: {items: 300, seed: 7}\n")
    assert padded.noise is not None
    first = distractors(padded, padded.noise, "main", 297)
    again = distractors(padded, padded.noise, "main", 297)
    assert first == again and len(first) == 297
    assert not any(contains(d.text, "Priya") for d in first)
    other = distractors(padded, Noise(items=300, seed=8), "main", 297)
    assert [d.text for d in other] != [d.text for d in first]
    engine = Recording()
    result = run(padded, engine, keep=True)
    assert [len(s.texts) for s in engine._tenants.values()] == [300]
    assert engine.calls.count("write_history") == 1 + 297 // 20 + 1  # the thread, then noise
    assert result.status.value == "done"


def test_noise_as_documents_goes_through_ingest():
    padded = scenario(EVIDENCE + "noise: {items: 50, shape: documents}\n")

    class Ingests(NaiveEngine):
        count = 0

        async def ingest(self, tenant, item):
            Ingests.count += 1
            return await super().ingest(tenant, item)

    run(padded, Ingests())
    assert Ingests.count == 47


def test_the_schema_accepts_every_shipped_document_and_refuses_a_two_kind_check():
    import jsonschema  # here, not at the top: collection (once per xdist worker) skips it

    validator = jsonschema.Draft202012Validator(document_schema())
    shipped = [
        data for path in sorted(fixtures_root().rglob("*.yaml")) for data, _, _ in _documents(path)
    ]
    assert len(shipped) >= 62
    assert all(not list(validator.iter_errors(d)) for d in shipped)
    fixture = next(d for d in shipped if d["kind"] == "fixture")
    broken = {**fixture, "queries": [{"text": "q", "checks": [{"contains": "a", "abstain": True}]}]}
    assert list(validator.iter_errors(broken))
    nested = {
        **fixture,
        "queries": [{"text": "q", "checks": [{"any_of": [{"contains": "a"}, {"bogus": 1}]}]}],
    }
    assert list(validator.iter_errors(nested))
