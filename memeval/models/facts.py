"""What a stand-in model takes as "the facts stated in the input": sentences of the new text.

Extraction prompts wrap the text to extract from in a marked section (mem0: `## New Messages`;
Graphiti: `<CURRENT_MESSAGE>`, `<TEXT>`, `<MESSAGES>`; LangMem: `<session_ID>`), after
instructions and examples that are not facts. The model reads that section when there is one,
else the last user message, drops role prefixes (`user:`) and LangChain's role banners
(`=== Human Message ===`) and splits what is left into sentences, each one fact.
"""

from __future__ import annotations

import json
import re

_SECTIONS = (
    re.compile(r"^## New Messages\n(.*?)(?=^## |\Z)", re.S | re.M),
    re.compile(
        r"<(CURRENT[ _]MESSAGE|CURRENT[ _]EPISODE|TEXT|MESSAGES|EPISODE[ _]CONTENT)>\n?(.*?)</\1>",
        re.S,
    ),
    re.compile(r"<(session_[0-9a-f-]+)>\n?(.*?)</\1>", re.S),
)
_ROLE = re.compile(r"^\s*(?:user|assistant|system)\s*:\s*", re.I | re.M)
_BANNER = re.compile(r"^=+ [\w ]+ Message =+$", re.M)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def input_text(prompt: str) -> str:
    """The part of a prompt that holds new input, by the first marker that matches."""
    for pattern in _SECTIONS:
        match = pattern.search(prompt)
        if match is not None:
            return _unjson(match.group(match.lastindex or 1))
    return prompt


def _unjson(section: str) -> str:
    """mem0 hands new messages over as a JSON list of role/content objects."""
    text = section.strip()
    try:
        loaded = json.loads(text)
    except ValueError:
        return text
    if isinstance(loaded, list):
        return "\n".join(str(m.get("content", "")) for m in loaded if isinstance(m, dict))
    return text


def sentences(text: str) -> list[str]:
    """Each non-empty line split into sentences, role prefixes dropped, in order, no repeats."""
    out: list[str] = []
    for line in _ROLE.sub("", _BANNER.sub("", text)).splitlines():
        for sentence in _SENTENCE.split(line.strip()):
            cleaned = sentence.strip(" -*\t")
            if cleaned and cleaned not in out:
                out.append(cleaned)
    return out


def facts(prompt: str) -> list[str]:
    return sentences(input_text(prompt))
