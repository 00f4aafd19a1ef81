"""Per-type judge prompts chosen by a probe's tags, strict and lenient modes, and several judges
voting, against a local OpenAI-compatible fake whose verdicts are scripted per judge model."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from memeval.errors import UsageError
from memeval.llm.agreement import agreement, cohen_kappa
from memeval.llm.answer import open_answerer
from memeval.llm.judge import (
    JUDGE_MAX_TOKENS,
    JUDGE_PROMPT_VERSION,
    PROMPTS_SHA256,
    JudgeMode,
    QuestionType,
    all_prompts,
    question_type,
    system_prompt,
)
from memeval.llm.judging import majority
from memeval.llm.pricing import Price
from memeval.llm.spec import LlmSpec
from memeval.report.markdown import render
from memeval.results import RunReport
from memeval.runner import run_case
from memeval.scoring.kpis import kpis
from tests.format.helpers import scenario
from tests.llm.fakes import WordEngine
from tests.llm.server import FakeOpenRouter

PRICE = Price(prompt=1 / 1_000_000, completion=2 / 1_000_000)
TYPED = """
kind: scenario
name: typed
title: Three question types
start: 2026-03-02
documents:
  - {id: d1, title: Trip, text: The team offsite starts on 14 May 2026 in Lisbon.}
  - {id: d2, title: Editor, text: Dana moved from vim to Helix editor in April.}
probes:
  - id: when
    question: On which day does the team offsite start?
    style: lexical
    expect: ["14 May"]
    tags: ["category:temporal-reasoning"]
  - id: editor
    question: Which editor does Dana use now?
    style: lexical
    expect: ["Helix"]
    tags: ["category:knowledge-update"]
  - id: pet
    question: What is the name of Dana's cat?
    style: lexical
    abstain: true
    tags: ["category:single-session-user"]
"""


def judge_spec(server: FakeOpenRouter, model: str) -> LlmSpec:
    return LlmSpec(
        model=model,
        base_url=server.base_url,
        price=PRICE,
        max_tokens=JUDGE_MAX_TOKENS,
        prompt_version=JUDGE_PROMPT_VERSION,
    )


def test_tags_choose_the_question_type():
    assert question_type(["difficulty:hard", "category:temporal"]) is QuestionType.temporal
    assert question_type(["category:knowledge-update"]) is QuestionType.update
    assert question_type(["category:multi-hop"]) is QuestionType.multi_hop
    assert question_type(["category:single-hop"], abstain=True) is QuestionType.abstention
    assert question_type([]) is QuestionType.fact
    assert system_prompt(QuestionType.temporal, JudgeMode.strict) != system_prompt(
        QuestionType.temporal, JudgeMode.lenient
    )
    prompts = all_prompts()
    # leniency about topic means nothing for abstention: both modes share that one prompt
    assert (
        prompts[f"{JUDGE_PROMPT_VERSION}/strict/abstention"]
        == prompts[f"{JUDGE_PROMPT_VERSION}/lenient/abstention"]
    )
    assert len(set(prompts.values())) == len(prompts) - 1


def test_majority_and_kappa():
    assert majority([True, True, False]) is True
    assert majority([True, False]) is False  # a tie is no majority for "correct"
    assert majority([None, None]) is None
    assert majority([None, True]) is True
    # 4 pairs: agree on 3; each says "yes" half the time -> chance 0.5, kappa 0.5
    assert cohen_kappa([(True, True), (False, False), (True, False), (False, True)]) == 0.0
    assert cohen_kappa([(True, True), (False, False), (True, True), (False, True)]) == 0.5
    assert cohen_kappa([(True, True), (True, True)]) is None


def test_three_judges_vote_with_per_type_prompts_and_the_report_shows_agreement(server):
    """`judge/a` and `judge/b` accept every answer; `judge/c` rejects the temporal one. The
    prompts the judges were sent are the ones for each probe's tag, in the chosen mode."""
    server.prices |= {"judge/a": (1, 1), "judge/b": (1, 1), "judge/c": (1, 1)}

    def script(model: str, chat: list[dict[str, str]]) -> str | None:
        if not model.startswith("judge/"):
            return None
        if model == "judge/c" and "offsite" in chat[-1]["content"]:
            return "WRONG"
        return "CORRECT"

    server.script = script
    spec = LlmSpec(
        model="test/cheap",
        base_url=server.base_url,
        price=PRICE,
        judges=[judge_spec(server, m) for m in ("judge/a", "judge/b", "judge/c")],
        judge_mode=JudgeMode.lenient,
    )

    async def go():
        async with open_answerer(spec) as answerer:
            return await run_case(scenario(TYPED), WordEngine(), run_id="jr", answerer=answerer)

    result = asyncio.run(go())
    judged = [p for p in result.probes if p.judges]
    assert judged, "some answer must have been judged"
    for p in judged:
        assert [v.model for v in p.judges] == ["judge/a", "judge/b", "judge/c"]
        assert p.judge_ok is True  # two of three accept every answer
    sent = {
        m["content"]
        for model, chat in server.seen
        if model.startswith("judge/")
        for m in chat
        if m["role"] == "system"
    }
    wanted = {
        "when": system_prompt(QuestionType.temporal, JudgeMode.lenient),
        "editor": system_prompt(QuestionType.update, JudgeMode.lenient),
        "pet": system_prompt(QuestionType.abstention, JudgeMode.lenient),
    }
    for p in judged:
        assert wanted[p.probe] in sent
        kind = {"when": "temporal", "editor": "update", "pet": "abstention"}[p.probe]
        assert p.judges[0].note.startswith(f"{JUDGE_PROMPT_VERSION}/lenient/{kind}:")
    split = [p for p in judged if p.probe == "when"]
    assert split and all(p.judges[2].ok is False for p in split)

    found = agreement([result])
    assert found is not None
    by_pair = {(p.a, p.b): p for p in found.pairs}
    assert by_pair["judge/a", "judge/b"].percent == 100.0
    ac = by_pair["judge/a", "judge/c"]
    assert ac.n == len(judged) and ac.percent == 100.0 * (len(judged) - len(split)) / len(judged)
    assert {(d.probe, d.phase) for d in found.disagreements} == {
        (p.probe, p.phase.value) for p in split
    }
    records = {k.name: k for k in kpis([result])}
    assert records["judge_answer"].value == 1.0
    report = RunReport(
        run_id="jr",
        label="jr",
        engine="words",
        suite="inline",
        started_at=datetime.now(UTC),
        cases=[result],
        kpis=kpis([result]),
    )
    text = render(report)
    assert "### Judge agreement" in text and PROMPTS_SHA256[:16] in text
    assert f"{JUDGE_PROMPT_VERSION}/lenient/temporal" in text
    assert wanted["when"].splitlines()[-1] in text


def test_the_prompt_hash_travels_with_the_run_and_a_worker_refuses_another(server):
    spec = LlmSpec(model="test/cheap", base_url=server.base_url)
    assert spec.prompts_sha256 == PROMPTS_SHA256
    other = spec.model_copy(update={"prompts_sha256": "0" * 64})

    async def go():
        async with open_answerer(other):
            pass

    with pytest.raises(UsageError, match="prompts"):
        asyncio.run(go())


def test_a_spec_stored_with_one_judge_still_reads():
    old = {
        "model": "a/b",
        "base_url": "http://127.0.0.1:1/v1",
        "judge": {"model": "c/d", "base_url": "http://127.0.0.1:1/v1"},
    }
    assert [j.model for j in LlmSpec.model_validate(old).judges] == ["c/d"]
