"""The answer prompt. Its version is recorded in every run, because changing a word of it
changes the scores: two runs are comparable only under the same version.
"""

from __future__ import annotations

from memeval.engines.pack import tokens

PROMPT_VERSION = "answer-v1"
MAX_TOKENS = 256
"""Room for a one-sentence answer, and for the reasoning tokens some models spend first."""
UNKNOWN = "unknown"

SYSTEM = f"""You answer a question using only the memory pack you are given.
Rules:
- Use nothing but the pack: no outside knowledge, no guessing.
- If the pack does not hold the answer, reply with exactly: {UNKNOWN}
- Answer in one short sentence. Copy names, numbers and dates exactly as the pack writes them.
- When the pack holds an old value and a newer one, give only the one that answers the \
question: the current value, unless the question asks about a given date."""

MESSAGE_OVERHEAD_TOKENS = 8
"""Role markers and separators a chat template adds around each message."""


def messages(question: str, pack: str) -> list[dict[str, str]]:
    user = f"Memory pack:\n<pack>\n{pack.strip()}\n</pack>\n\nQuestion: {question.strip()}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def is_unknown(answer: str | None) -> bool:
    """Abstention must be a clear `unknown`, not a hedge that happens to contain the word."""
    if answer is None:
        return False
    return answer.strip().strip("\"'`.!").strip().casefold() == UNKNOWN


def expected_prompt_tokens(question: str, pack: str) -> int:
    """What the call will most likely be billed for: about four characters a token."""
    return sum(tokens(m["content"]) + MESSAGE_OVERHEAD_TOKENS for m in messages(question, pack))


def max_prompt_tokens(chat: list[dict[str, str]]) -> int:
    """An upper bound, not a guess: byte-level tokenizers never make more tokens than UTF-8
    bytes. Holding this much keeps the budget's promise that spend never passes the cap."""
    total = sum(len(m["content"].encode()) + MESSAGE_OVERHEAD_TOKENS for m in chat)
    return total + MESSAGE_OVERHEAD_TOKENS
