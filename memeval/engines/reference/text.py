"""Turning text into the terms every other module compares.

Everything downstream (ranking, coverage, entity and predicate matching, belief slots) compares
*terms*: lowercased word tokens without stopwords, reduced by a light suffix stemmer. One shared
definition keeps a query and the text it should match speaking the same vocabulary.
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(r"[^\W_]+")  # letters and digits in any script
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")

# Function words plus the framing words of questions ("tell me", "what is"): they say how a
# question is asked, not what it is about, so they must not count toward relevance.
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be been before being
    below between both but by can could did do does doing done down during each either else
    ever every few for from further get gets got had has have having he her here hers him his
    how i if in into is it its itself just know let me many might mine more most much must my
    neither no nor not now of off often on once one only or other our ours out over own per
    please
    s same shall she should show so some such t tell than that the their theirs them then
    there these they this those through to too under until up upon us very was we were what
    whats when where whether which while who whom whose why will with within would yet you
    your yours
    """.split()
)

# Longest first; each pair is (suffix, replacement). Deliberately light: enough to join the
# inflections a question and a statement use for one idea ("reports"/"report",
# "rotated"/"rotation", "managed"/"manager"), not a full Porter stemmer whose extra
# aggressiveness merges unrelated words in short texts.
_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("izations", "iz"),
    ("ization", "iz"),
    ("ations", "at"),
    ("ation", "at"),
    ("ating", "at"),
    ("ated", "at"),
    ("ates", "at"),
    ("ions", ""),
    ("ion", ""),
    ("ments", ""),
    ("ment", ""),
    ("nesses", ""),
    ("ness", ""),
    ("ingly", ""),
    ("ings", ""),
    ("ing", ""),
    ("edly", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ers", ""),
    ("er", ""),
    ("ed", ""),
    ("ly", ""),
    ("s", ""),
)
_KEEP_S = ("ss", "us", "is")
_MIN_STEM = 3


def tokens(text: str) -> list[str]:
    """Lowercased alphanumeric runs; punctuation splits, so `eu-west-2` is three tokens."""
    return _TOKEN.findall(text.casefold())


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    if len(word) <= _MIN_STEM or any(c.isdigit() for c in word):
        return word
    out = word
    for suffix, replacement in _SUFFIXES:
        if not out.endswith(suffix):
            continue
        if suffix == "s" and out.endswith(_KEEP_S):
            break
        base = out[: -len(suffix)] + replacement
        if len(base) < _MIN_STEM:
            continue  # too short to strip this way; a shorter suffix may still apply
        if suffix in ("ed", "ing", "er", "ers") and _doubled(base):
            base = base[:-1]  # planned -> plan, running -> run
        out = base
        break
    if len(out) > _MIN_STEM and out.endswith("e"):
        out = out[:-1]  # rule/rules/ruled all end as "rul"
    return out


def _doubled(base: str) -> bool:
    return len(base) > _MIN_STEM and base[-1] == base[-2] and base[-1] not in "lsz"


def terms(text: str) -> list[str]:
    """Content terms in order, repeats kept (BM25 needs term frequencies)."""
    return [stem(t) for t in tokens(text) if t not in STOPWORDS]


@lru_cache(maxsize=1 << 16)
def trigrams(term: str) -> frozenset[str]:
    """Character 3-grams with boundary marks, so short terms still have a few grams."""
    padded = f"#{term}#"
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def normalise(text: str) -> str:
    """A comparison key for names and values: case, punctuation and spacing do not matter."""
    return " ".join(tokens(text))


def predicate_words(predicate: str) -> str:
    """`reports_to` / `locatedIn` -> "reports to" / "located in", so predicates index as words."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", predicate)
    return re.sub(r"[_\-.:/]+", " ", spaced)
