"""The model judge over OpenRouter's wire (a local fake): verdicts, their prompt version, their
cost on the run's bill, the report's judge section, and `--judge` needing `--llm`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memeval.llm.answer import open_answerer
from memeval.llm.judge import JUDGE_MAX_TOKENS, JUDGE_PROMPT_VERSION, all_prompts, verdict
from memeval.llm.pricing import Price
from memeval.llm.spec import LlmSpec
from memeval.report.markdown import render
from memeval.results import RunReport
from memeval.runner import run_case
from memeval.scoring.kpis import kpis
from memeval.suites.scenario import Scenario
from tests.format.helpers import scenario
from tests.llm.fakes import WordEngine
from tests.llm.server import KEY, FakeOpenRouter

PRICE = Price(prompt=1 / 1_000_000, completion=2 / 1_000_000)
PORTS = """
kind: scenario
name: ports
title: Remembers a port
start: 2026-03-02
documents:
  - {id: d1, title: Billing, text: The billing service listens on port 8443.}
probes:
  - id: port
    question: Which port does the billing service listen on?
    style: lexical
    expect: ["8443"]
    answer: port 8443
  - id: owner
    question: Which port does the billing service listen on, and who owns it?
    style: lexical
    expect: ["8443"]
    answer: port 8443 owned by Priya
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path) -> Iterator[FakeOpenRouter]:
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    monkeypatch.delenv("MEMEVAL_LLM_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with FakeOpenRouter() as fake:
        yield fake


def judged(server: FakeOpenRouter, case: Scenario):
    grader = LlmSpec(
        model="test/dear",
        base_url=server.base_url,
        price=PRICE,
        max_tokens=JUDGE_MAX_TOKENS,
        prompt_version=JUDGE_PROMPT_VERSION,
    )
    spec = LlmSpec(model="test/cheap", base_url=server.base_url, price=PRICE, judges=[grader])

    async def go():
        async with open_answerer(spec) as answerer:
            return await run_case(case, WordEngine(), run_id="judge-run", answerer=answerer)

    return asyncio.run(go())


def test_the_judge_grades_each_answer_and_is_billed_with_the_run(server):
    result = judged(server, scenario(PORTS))
    verdicts = {(p.probe, p.phase.value): p.judge_ok for p in result.probes}
    assert verdicts == {
        ("port", "recall"): True,
        ("port", "synthesis"): True,
        ("owner", "recall"): False,
        ("owner", "synthesis"): False,
    }
    assert all(
        p.judge_note.startswith(f"{JUDGE_PROMPT_VERSION}/strict/fact:") for p in result.probes
    )
    assert [c.model for c in server.calls].count("test/dear") == 4
    assert all(c.max_tokens == JUDGE_MAX_TOKENS for c in server.calls if c.model == "test/dear")
    assert result.answerer_usd_micros == server.billed_micros
    assert all(p.model_f1 is not None and p.model_f1 > 0 for p in result.probes)
    records = {k.name: k for k in kpis([result])}
    assert records["judge_answer"].value == 0.5 and records["judge_answer"].n == 4
    report = RunReport(
        run_id="judge-run",
        label="judge",
        engine="word",
        suite="inline",
        started_at=datetime.now(UTC),
        cases=[result],
        kpis=kpis([result]),
    )
    text = render(report)
    assert "## Model judge" in text and JUDGE_PROMPT_VERSION in text
    assert all_prompts()[f"{JUDGE_PROMPT_VERSION}/strict/fact"].splitlines()[-1] in text


def test_verdicts_are_read_strictly():
    assert verdict("CORRECT") is True and verdict(" wrong.") is False
    assert verdict("Correct, the port matches") is None and verdict(None) is None


def test_judge_needs_llm(cli):
    done = cli("run", "--judge", "test/dear", "--in-process")
    assert done.returncode == 2
    assert "--judge" in done.stderr + done.stdout and "--llm" in done.stderr + done.stdout


def test_model_answers_to_fixture_queries_follow_any_of_and_match():
    from memeval.llm.grading import answerable_query, grade_query
    from memeval.suites.fixture import Query

    query = Query.model_validate(
        {
            "text": "How long do refunds take?",
            "checks": [
                {"any_of": [{"abstain": True}, {"contains": "10 days", "match": "number"}]},
                {"not_contains": "9", "match": "number"},
                {"source": "ledger"},
            ],
        }
    )
    assert answerable_query(query)
    assert grade_query("Refunds take 10 days.", query)
    assert grade_query("unknown", query)
    assert not grade_query("Refunds take 9 or 10 days.", query)
    assert not grade_query("Refunds take 110 days.", query)
