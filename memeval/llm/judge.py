"""The model judge (`--judge MODEL`): is a free-form answer right, given the gold answer?

Containment and token F1 miss answers that say the right thing in other words ("a fortnight"
for "two weeks"); a judge model reads both. Its prompt is versioned like the answer prompt and
recorded with every verdict, and the report prints it: two runs' judge scores compare only
under the same version. The judge is paid and budgeted exactly like the answering model (same
budget scopes, same rate limits); its verdict is a separate KPI (`judge_answer`), never a
replacement for the rule-based grades.
"""

from __future__ import annotations

JUDGE_PROMPT_VERSION = "judge-v1"
JUDGE_MAX_TOKENS = 16
"""Room for one word, and for the few tokens some models spend before it."""
RIGHT, WRONG = "CORRECT", "WRONG"

SYSTEM = f"""You grade one answer to a question about a user's memory.
You are given the question, the gold answer, and the answer to grade.
Rules:
- Reply {RIGHT} if the answer states the same fact as the gold answer, in any wording; \
extra correct detail is fine.
- Reply {WRONG} if it states another fact, contradicts the gold answer, gives an old value \
the gold answer replaces, hedges between values, or says it does not know while the gold \
answer holds a fact.
- If the gold answer is "unknown", reply {RIGHT} only if the answer declines to give a fact.
- Reply with the single word {RIGHT} or {WRONG}."""


def judge_messages(question: str, gold: str, answer: str) -> list[dict[str, str]]:
    user = (
        f"Question: {question.strip()}\nGold answer: {gold.strip()}\n"
        f"Answer to grade: {answer.strip()}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


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
