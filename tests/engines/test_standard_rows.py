"""`full-context` and `oracle` on a small inline case: what each pack holds, the cut reported,
and an engine that is told nothing (full-context) holding everything the oracle leaves out."""

from __future__ import annotations

from memeval.engines.full_context import FullContextEngine
from memeval.engines.oracle import OracleEngine
from tests.format.helpers import run, scenario

CASE = """
kind: scenario
name: two-facts
title: Two facts, one asked
start: 2026-03-02
documents:
  - {id: port, title: Billing, text: The billing service listens on port 8443.}
  - {id: lunch, title: Lunch, text: The team lunch is on Fridays at noon.}
probes:
  - id: port
    question: Which port does the billing service listen on?
    style: lexical
    expect: ["8443"]
    evidence: [port]
  - id: doc
    question: Which port does billing use?
    via: context_doc
    heading: Billing
    style: lexical
    expect: ["8443"]
    evidence: [port]
  - id: pet
    question: What is the cat called?
    style: lexical
    abstain: true
"""


def test_the_oracle_holds_the_evidence_alone_and_abstains_without_any():
    result = run(scenario(CASE), OracleEngine())
    by = {(p.probe, p.phase.value): p for p in result.probes}
    for phase in ("recall", "synthesis"):
        for probe in ("port", "doc"):
            p = by[probe, phase]
            assert "8443" in p.pack and "lunch" not in p.pack
            assert p.evidence_recalled and p.evidence_rank == 1
        assert by["pet", phase].hit  # no evidence named: an empty, abstaining pack


def test_full_context_holds_everything_and_reports_a_cut():
    whole = run(scenario(CASE), FullContextEngine())
    port = next(p for p in whole.probes if p.probe == "port")
    assert "8443" in port.pack and "lunch" in port.pack
    assert not next(p for p in whole.probes if p.probe == "pet").hit  # it never abstains
    cut = run(scenario(CASE), FullContextEngine(max_tokens=45))
    port = next(p for p in cut.probes if p.probe == "port")
    assert "## Truncated: the 1 oldest of 2 writes are left out (cap 45 tokens)" in port.pack
    assert "lunch" in port.pack and "8443" not in port.pack  # the newer write is kept
