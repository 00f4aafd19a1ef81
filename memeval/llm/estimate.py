"""What answering a selection of cases will cost, worked out before a cent is spent.

Packs are not known until the engine runs, so their size is estimated from what the case
writes, capped at a typical pack budget. Two figures come out per model: the expected spend
(about four characters a token, short answers) and the spend if every call used all of its
`max_tokens`. The calls are counted with the runner's own rules, so the count is exact.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel

from memeval.engines.pack import CHARS_PER_TOKEN, tokens
from memeval.engines.types import Hit, QueryResult
from memeval.llm.grading import (
    answerable_probe,
    answerable_query,
    hits_pack,
    probe_question,
    query_question,
)
from memeval.llm.judge import QuestionType, question_type
from memeval.llm.pricing import Price
from memeval.llm.prompt import expected_prompt_tokens
from memeval.results import CaseResult, CaseStatus, Phase
from memeval.scoring.pack import gold_answers
from memeval.suites.fixture import Fixture
from memeval.suites.scenario import Scenario

PACK_TOKENS = 1500
"""The reference engine's pack budget: a fair cap on what one recall returns."""
EXPECTED_COMPLETION_TOKENS = 40
"""A one-sentence answer, or `unknown`."""
HIT_OVERHEAD_TOKENS = 12
"""The bullet, dates and source that go with each hit of a fixture query's pack."""


class PlannedCall(BaseModel):
    case_id: str
    prompt_tokens: int


class ModelEstimate(BaseModel):
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens_expected: int
    completion_tokens_max: int
    usd_expected: float | None  # None: no price is known
    usd_max: float | None


def planned_calls(
    cases: Iterable[Scenario | Fixture], *, k: int = 5, pack_tokens: int = PACK_TOKENS
) -> list[PlannedCall]:
    """One entry per model call a single trial makes, with its expected prompt size."""
    calls: list[PlannedCall] = []
    for case in cases:
        if isinstance(case, Fixture):
            texts = sorted((tokens(a.text) for a in case.assertions), reverse=True)
            size = min(pack_tokens, sum(t + HIT_OVERHEAD_TOKENS for t in texts[:k]))
            calls += [
                PlannedCall(case_id=case.id, prompt_tokens=_prompt(query_question(q), size))
                for q in case.queries
                if answerable_query(q)
            ]
            continue
        size = min(pack_tokens, _written_tokens(case))
        calls += [
            PlannedCall(case_id=case.id, prompt_tokens=_prompt(p.question, size))
            for _ in Phase
            for p in case.probes
            if answerable_probe(p)
        ]
    return calls


class PlannedAnswer(BaseModel):
    """One model call a case will make, as far as it is known before the case runs: its
    question, a stand-in for its pack, and for a probe what its judges will grade against."""

    question: str
    pack: str
    gold: str | None = None  # None: a fixture query, which no judge grades
    kind: QuestionType = QuestionType.fact


def planned_answers(
    case: Scenario | Fixture, *, k: int = 5, pack_tokens: int = PACK_TOKENS
) -> list[PlannedAnswer]:
    """The calls `planned_calls` counts for one case, with real text to hold their cost by:
    the pack stand-in is what the case writes (a fixture's `k` longest assertions, as hits
    with their dates and sources), cut at a typical pack budget, so a tokenizer sees text
    like the real pack's."""
    limit = pack_tokens * CHARS_PER_TOKEN
    if isinstance(case, Fixture):
        hits = [
            Hit(text=a.text, source=a.source, valid_from=a.valid_from, valid_to=a.valid_to)
            for a in case.assertions
        ]
        longest = sorted(hits, key=lambda h: len(hits_pack(QueryResult(hits=[h]))))[-k:]
        pack = hits_pack(QueryResult(hits=longest))[:limit]
        return [
            PlannedAnswer(question=query_question(q), pack=pack)
            for q in case.queries
            if answerable_query(q)
        ]
    pack = "\n".join(f"- {t}" for t in _written(case))[:limit]
    return [
        PlannedAnswer(
            question=probe_question(p),
            pack=pack,
            gold=gold_answers(p)[0],
            kind=question_type(p.tags, abstain=p.abstain),
        )
        for _ in Phase
        for p in case.probes
        if answerable_probe(p)
    ]


def estimate(
    calls: list[PlannedCall],
    *,
    trials: int,
    prices: dict[str, Price | None],
    max_tokens: int,
) -> list[ModelEstimate]:
    count = len(calls) * trials
    prompt = sum(c.prompt_tokens for c in calls) * trials
    expected = count * min(EXPECTED_COMPLETION_TOKENS, max_tokens)
    most = count * max_tokens
    out: list[ModelEstimate] = []
    for model, price in prices.items():
        out.append(
            ModelEstimate(
                model=model,
                calls=count,
                prompt_tokens=prompt,
                completion_tokens_expected=expected,
                completion_tokens_max=most,
                usd_expected=None if price is None else price.micros(prompt, expected) / 1e6,
                usd_max=None if price is None else price.micros(prompt, most) / 1e6,
            )
        )
    return out


def _prompt(question: str, pack_tokens: int) -> int:
    """The prompt around a pack of `pack_tokens`, sized with a stand-in pack of that length."""
    return expected_prompt_tokens(question, "") + pack_tokens


def _written(case: Scenario) -> list[str]:
    """Everything the scenario writes: no pack can recall more than that."""
    written = [d.title + d.text for d in case.documents]
    written += [lr.text for lr in case.learnings]
    for thread in case.threads:
        written += [line.text for line in thread.lines(case.thread_start(thread))]
    return written


def _written_tokens(case: Scenario) -> int:
    return sum(tokens(t) for t in _written(case))


def skipped_calls(cases: Iterable[Scenario | Fixture], results: list[CaseResult]) -> int:
    """The model calls the budget left unmade: each skipped case's planned calls less the
    answers it did get before the money ran out."""
    planned = Counter(call.case_id for call in planned_calls(cases))
    skipped = 0
    for result in results:
        if result.status is CaseStatus.skipped_budget:
            answered = sum(p.model_answer is not None for p in result.probes)
            answered += sum(q.model_answer is not None for q in result.queries)
            skipped += max(0, planned[result.case_id] - answered)
    return skipped
