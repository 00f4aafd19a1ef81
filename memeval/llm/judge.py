"""The model judge (`--judge MODEL`, repeatable): is a free-form answer right, given the gold one?

Containment and token F1 miss answers that say the right thing in other words ("a fortnight"
for "two weeks"); a judge model reads both. Published accuracies move by tens of points with
the judge's instructions, so each question type gets its own (an off-by-one day is wrong for a
temporal question; the later value wins an update question; "not mentioned" is right for an
abstention), in two modes: `strict` (the default) and `lenient`, which credits an answer on the
right topic as Mem0's published evaluation does, so memeval's numbers can stand beside those.

Every prompt has an id (`judge-v2/strict/temporal`) recorded with each verdict, every text is
printed in the report, and `PROMPTS_SHA256` (over the answer and judge prompts) travels in the
run's options: two runs' judge scores compare only under the same hash.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum

from memeval.llm import prompt

JUDGE_PROMPT_VERSION = "judge-v2"
JUDGE_MAX_TOKENS = 16
"""Room for one word, and for the few tokens some models spend before it."""
RIGHT, WRONG = "CORRECT", "WRONG"


class JudgeMode(StrEnum):
    strict = "strict"
    lenient = "lenient"


class QuestionType(StrEnum):
    """What a judge must weigh, shared by LongMemEval's types and LoCoMo's categories."""

    fact = "fact"
    preference = "preference"
    multi_hop = "multi-hop"
    temporal = "temporal"
    update = "update"
    open_domain = "open-domain"
    abstention = "abstention"


TYPE_OF_TAG: dict[str, QuestionType] = {
    # LongMemEval question types, as `category:` tags (memeval.importers.longmemeval)
    "category:single-session-user": QuestionType.fact,
    "category:single-session-assistant": QuestionType.fact,
    "category:single-session-preference": QuestionType.preference,
    "category:multi-session": QuestionType.multi_hop,
    "category:temporal-reasoning": QuestionType.temporal,
    "category:knowledge-update": QuestionType.update,
    # LoCoMo categories (memeval.importers.locomo)
    "category:single-hop": QuestionType.fact,
    "category:multi-hop": QuestionType.multi_hop,
    "category:temporal": QuestionType.temporal,
    "category:open-domain": QuestionType.open_domain,
    "category:adversarial": QuestionType.abstention,
}

_BASE = f"""You grade one answer to a question about what a user told an assistant.
You are given the question, the gold answer, and the answer to grade.
Reply with the single word {RIGHT} or {WRONG}."""

_STRICT = f"""- Reply {RIGHT} if the answer states the same fact as the gold answer, in any \
wording; extra detail is fine when it does not contradict the gold answer.
- Reply {WRONG} if it states another fact, contradicts the gold answer, hedges between values, \
or says it does not know while the gold answer holds a fact."""

_LENIENT = f"""- Be generous: reply {RIGHT} if the answer is about the same topic as the gold \
answer and does not contradict it, even when it is vaguer, longer or only partly right.
- Reply {WRONG} only if it names a different fact, contradicts the gold answer, or declines to \
answer while the gold answer holds a fact."""

_TYPE_RULES: dict[QuestionType, str] = {
    QuestionType.fact: "- The question asks for one stated detail: a name, number or thing "
    "must match the gold answer.",
    QuestionType.preference: "- The question asks what the user likes or would want: the "
    "answer must honour the preference the gold answer describes; a generic suggestion that "
    "ignores it is wrong.",
    QuestionType.multi_hop: "- The question joins several things said at different times: "
    "the answer must hold every part the gold answer holds; a count or a list missing an item "
    "is wrong.",
    QuestionType.temporal: "- The question is about time. Dates, durations and orders must "
    "match the gold answer exactly: a day, month or year off by one is wrong. A relative date "
    '("the week before 9 May 2023") is right only if it names the same period.',
    QuestionType.update: "- The user's information changed over time and the gold answer is "
    "the latest value. An answer giving an earlier value, or both values without saying which "
    "holds now, is wrong.",
    QuestionType.open_domain: "- The question asks for a judgement drawn from what was said: "
    "accept any answer reaching the gold answer's conclusion, even when worded as a likelihood.",
    QuestionType.abstention: "- The conversation never says what the question asks. The "
    'answer is right only if it says so ("unknown", "not mentioned", "I don\'t know"); any '
    "answer asserting a fact is wrong, even a plausible one.",
}

MODE_RULES = {JudgeMode.strict: _STRICT, JudgeMode.lenient: _LENIENT}


def question_type(tags: list[str], *, abstain: bool = False) -> QuestionType:
    """The type a probe's tags name (the first known one); an abstain probe is an abstention
    whatever its tags."""
    if abstain:
        return QuestionType.abstention
    return next((TYPE_OF_TAG[t] for t in tags if t in TYPE_OF_TAG), QuestionType.fact)


def prompt_id(kind: QuestionType, mode: JudgeMode) -> str:
    return f"{JUDGE_PROMPT_VERSION}/{mode.value}/{kind.value}"


def system_prompt(kind: QuestionType, mode: JudgeMode) -> str:
    """The abstention rule replaces the mode's: leniency about topic means nothing there."""
    rules = [_TYPE_RULES[kind]]
    if kind is not QuestionType.abstention:
        rules.insert(0, MODE_RULES[mode])
    return _BASE + "\nRules:\n" + "\n".join(rules)


def all_prompts() -> dict[str, str]:
    """Every judge prompt by id, for the report and the hash."""
    return {
        prompt_id(kind, mode): system_prompt(kind, mode)
        for mode in JudgeMode
        for kind in QuestionType
    }


def _prompts_sha256() -> str:
    digest = hashlib.sha256()
    for name, text in sorted({prompt.PROMPT_VERSION: prompt.SYSTEM, **all_prompts()}.items()):
        digest.update(f"{name}\n{text}\n\0".encode())
    return digest.hexdigest()


PROMPTS_SHA256 = _prompts_sha256()
"""Over every answer and judge prompt's id and text: changes whenever a word of one does."""


def judge_messages(
    question: str,
    gold: str,
    answer: str,
    kind: QuestionType = QuestionType.fact,
    mode: JudgeMode = JudgeMode.strict,
) -> list[dict[str, str]]:
    user = (
        f"Question: {question.strip()}\nGold answer: {gold.strip()}\n"
        f"Answer to grade: {answer.strip()}"
    )
    return [
        {"role": "system", "content": system_prompt(kind, mode)},
        {"role": "user", "content": user},
    ]


def verdict(reply: str | None) -> bool | None:
    """True or False from the judge's reply; None when it said neither word clearly."""
    if reply is None:
        return None
    word = reply.strip().strip("\"'`.!*").strip().upper()
    if word == RIGHT:
        return True
    if word == WRONG:
        return False
    return None
