"""Names as written: the words of a text that pick out one particular thing.

A question about "Marta Kowal" is not about "Marta Kowalska", however well the rest of it
matches; and "gate 7C" is not "gate 4A". So the words that *name* something must be matched as
written, while the words that say what is asked about it may be paraphrased. Two generic,
writing-based signs mark a name word:

- a capitalised word inside a sentence ("the Hilltop depot"), unless it is a function word, a
  title ("Dr"), a month or a weekday, or an acronym ("CEO", "IT": those name kinds of things);
  a capitalised first word counts only when the next word is a name word too ("Sam Okoro
  owns...");
- a code mixing letters and digits ("7C", "A320", "H2"), or the number of one: digits
  hyphenated to a word ("ORD-5817", "Heron-7") or a long serial ("8812045"). "ORD-5817" and
  "ORD-5871" differ only there, so that is the part that must match as written.
"""

from __future__ import annotations

import re

from memeval.engines.reference.text import STOPWORDS, framing, stem, tokens

_WORD = re.compile(r"[^\W_]+")
_SENTENCE_END = re.compile(r"[.!?:;]\s*$|^\s*$")
_HYPHENATED_BEFORE = re.compile(r"[^\W\d_][^\W_]*[-‐‑]$")  # "ORD-" of "ORD-5817"
_HYPHENATED_AFTER = re.compile(r"[-‐‑][^\W_]*[^\W\d_]")  # "-Eleven" of "7-Eleven"
SERIAL_DIGITS = 5  # a bare number this long is an identifier, not a count or a year
_NOT_NAMES = frozenset(
    """
    mr mrs ms miss mx dr prof sir dame st mt
    monday tuesday wednesday thursday friday saturday sunday
    """.split()
)


def name_terms(text: str) -> frozenset[str]:
    """Stems of the name words of `text` (see the module doc), as `text.terms` spells them."""
    found = list(_WORD.finditer(text))
    marks = [_candidate(m.group()) or _numbered(text, m) for m in found]
    out: set[str] = set()
    for i, match in enumerate(found):
        if not marks[i]:
            continue
        word = match.group()
        first = bool(_SENTENCE_END.search(text[: match.start()]))
        if first and not _code(word) and not (i + 1 < len(found) and marks[i + 1]):
            continue
        out.add(stem(word.casefold()))
    return frozenset(out)


def _candidate(word: str) -> bool:
    if _code(word):
        return True
    lower = word.casefold()
    if not word[:1].isupper() or word.isupper() or lower in STOPWORDS or lower in _NOT_NAMES:
        return False
    return not framing(stem(lower))


def _numbered(text: str, match: re.Match[str]) -> bool:
    """The number part of an identifier (see the module doc); a year is no identifier."""
    word = match.group()
    if not word.isdigit() or framing(word):
        return False
    if len(word) >= SERIAL_DIGITS:
        return True
    before = _HYPHENATED_BEFORE.search(text[: match.start()])
    return bool(before) or bool(_HYPHENATED_AFTER.match(text, match.end()))


def _code(word: str) -> bool:
    return any(c.isdigit() for c in word) and any(c.isalpha() for c in word)


def name_heads(text: str, names: frozenset[str]) -> frozenset[str]:
    """The word right after each written name: what kind of thing the name is ("office" in
    "the Leeds office"), not what is asked about it."""
    words = tokens(text)
    stems = [stem(w) for w in words]
    return frozenset(
        stems[i + 1]
        for i in range(len(words) - 1)
        if stems[i] in names and stems[i + 1] not in names and words[i + 1] not in STOPWORDS
    )
