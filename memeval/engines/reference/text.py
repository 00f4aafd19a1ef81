"""Turning text into the terms every other module compares.

Everything downstream (ranking, coverage, entity and predicate matching, belief slots) compares
*terms*: lowercased word tokens without stopwords, reduced by a light suffix stemmer. One shared
definition keeps a query and the text it should match speaking the same vocabulary.

The `lexicon` adds three things on top, to stored texts and questions alike: irregular forms
reach their base word ("led" -> "lead"), a known phrase ("out of hours") is also one term, and
each term knows its related terms ("boss" -> "manager") for matching at a discount.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

from memeval.engines.reference import lexicon

_TOKEN = re.compile(r"[^\W_]+")  # letters and digits in any script
# A break after a sentence's closing mark, or a run of newlines. Written to open with `\s`,
# which lets the regex engine skip to whitespace instead of trying both branches at every
# character: the same splits as `(?<=[.!?;])\s+|\n+`, in a third of the time.
_SENTENCE = re.compile(r"\s(?:(?<=[.!?;]\s)\s*|(?<=\n)\n*)")

# Function words plus the framing words of questions ("tell me", "what is"): they say how a
# question is asked, not what it is about, so they must not count toward relevance.
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be been before being
    below between both but by can could did do does doing done down during each either else
    ever every few for from further get gets got had has have having he her here hers him his
    how i if in into is it its itself just know let me many might mine more most much must my
    neither no nor not now of off often on once one only or other our ours out over per
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
    ("ful", ""),
    ("ion", ""),
    ("ments", ""),
    ("ment", ""),
    ("nesses", ""),
    ("ness", ""),
    ("ingly", ""),
    ("ings", ""),
    ("ing", ""),
    ("edly", ""),
    ("eries", ""),
    ("ery", ""),
    ("iers", "y"),
    ("ier", "y"),
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


_IRREGULAR = dict(
    pair.split() for pair in lexicon.IRREGULAR.replace("\n", " ").split(",") if pair.strip()
)


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Irregular forms first, then one suffix, then a bare "-er" the first one uncovered, so a
    family shares one stem whichever inflection it is read in ("water"/"waters",
    "deliver"/"delivering"/"deliveries")."""
    word = _IRREGULAR.get(word, word)
    if len(word) <= _MIN_STEM or any(c.isdigit() for c in word):
        return word
    out = _strip(word)
    if out != word and out.endswith("er") and len(out) - 2 >= _MIN_STEM:
        out = _strip(out)
    if len(out) > _MIN_STEM and out.endswith("e"):
        out = out[:-1]  # rule/rules/ruled all end as "rul"
    return out


def _strip(word: str) -> str:
    for suffix, replacement in _SUFFIXES:
        if not word.endswith(suffix):
            continue
        if (suffix == "s" and word.endswith(_KEEP_S)) or (suffix == "ly" and word.endswith("ply")):
            break  # "status", "supply": not a plural, not an adverb
        base = word[: -len(suffix)] + replacement
        if len(base) < _MIN_STEM + (suffix == "ly"):
            continue  # too short to strip this way ("reply"); a shorter suffix may still apply
        if suffix in ("ed", "ing", "er", "ers") and _doubled(base):
            base = base[:-1]  # planned -> plan, running -> run
        return base
    return word


def _doubled(base: str) -> bool:
    return len(base) > _MIN_STEM and base[-1] == base[-2] and base[-1] not in "lsz"


def terms(text: str) -> list[str]:
    """Content terms in order, repeats kept (BM25 needs term frequencies); a known phrase
    adds its own term after its first word, its words staying terms as well."""
    return [term for _, term in placed_terms(text)]


def placed_terms(text: str) -> list[tuple[int, str]]:
    """`terms` with the token position each starts at."""
    words = tokens(text)
    stems = [stem(w) for w in words]
    out: list[tuple[int, str]] = []
    for i, word in enumerate(words):
        if word not in STOPWORDS:
            out.append((i, stems[i]))
        for phrase in _PHRASES.get(stems[i], ()):
            if _phrase_at(phrase, words, stems, i):
                out.append((i, PHRASE_JOIN.join(phrase)))
    return out


def _phrase_at(phrase: tuple[str, ...], words: list[str], stems: list[str], i: int) -> bool:
    """The phrase's stems in a row from `i`; a pronoun may split a verb from its particle
    ("back it up" is "back up")."""
    j = i + 1
    if len(phrase) == 2 and j < len(words) and words[j] in _PRONOUN_GAP:
        j += 1
    rest = phrase[1:]
    return tuple(stems[j : j + len(rest)]) == rest


def is_phrase(term: str) -> bool:
    return PHRASE_JOIN in term


def bigrams(text: str) -> set[tuple[str, str]]:
    """Terms of words written side by side (a function word between them parts them, phrase
    terms aside): a text's multi-word names and measures, "power usage effectiveness"."""
    placed = [(i, t) for i, t in placed_terms(text) if not is_phrase(t)]
    return {(a, b) for (i, a), (j, b) in pairwise(placed) if j == i + 1}


@lru_cache(maxsize=1 << 16)
def trigrams(term: str) -> frozenset[str]:
    """Character 3-grams with boundary marks, so short terms still have a few grams."""
    padded = f"#{term}#"
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def clauses(text: str) -> list[str]:
    """The text cut after each sentence's closing mark and at line breaks, unstripped."""
    return _SENTENCE.split(text)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in clauses(text) if s.strip()]


def normalise(text: str) -> str:
    """A comparison key for names and values: case, punctuation and spacing do not matter."""
    return " ".join(tokens(text))


def predicate_words(predicate: str) -> str:
    """`reports_to` / `locatedIn` -> "reports to" / "located in", so predicates index as words."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", predicate)
    return re.sub(r"[_\-.:/]+", " ", spaced)


# ---- the lexicon, in stemmed form ---------------------------------------------------------

PHRASE_JOIN = "_"  # never inside a token, so a phrase term cannot clash with a word
SYNONYM_CREDIT = 0.8  # a related word is never worth as much as the word itself...
CATEGORY_CREDIT = 0.6  # ...and a kind of thing ("vehicle" for "truck") less than a synonym
_PRONOUN_GAP = frozenset("it them him her this that these those something".split())


def _key(entry: str) -> str | None:
    """An entry's term: the stem of one word, or the joined stems of a phrase (which may be
    made of function words alone: "how much")."""
    words = tokens(entry)
    if not words or (len(words) == 1 and words[0] in STOPWORDS):
        return None
    return PHRASE_JOIN.join(stem(w) for w in words) if len(words) > 1 else stem(words[0])


def _groups(table: str) -> list[str]:
    """One line per group, an indented line joined to the one above."""
    out: list[str] = []
    for line in table.strip().splitlines():
        if line[:1].isspace() and out:
            out[-1] = f"{out[-1]} {line.strip()}"
        elif line.strip():
            out.append(line.strip())
    return out


def _entries(line: str) -> list[str]:
    return [k for e in line.split(",") if (k := _key(e)) is not None]


def _build() -> dict[str, dict[str, float]]:
    related: dict[str, dict[str, float]] = {}

    def link(a: str, b: str, value: float) -> None:
        if a != b:
            mine = related.setdefault(a, {})
            mine[b] = max(mine.get(b, 0.0), value)

    for line in _groups(lexicon.SYNONYMS):
        group = _entries(line)
        for a in group:
            for b in group:
                link(a, b, SYNONYM_CREDIT)
    for line in _groups(lexicon.CATEGORIES):
        head, _, members = line.partition(":")
        for h in _entries(head):
            for m in _entries(members):
                link(h, m, CATEGORY_CREDIT)
                link(m, h, CATEGORY_CREDIT)
    return related


def _phrases() -> dict[str, list[tuple[str, ...]]]:
    out: dict[str, list[tuple[str, ...]]] = {}
    for term in _RELATED:
        if is_phrase(term):
            parts = tuple(term.split(PHRASE_JOIN))
            out.setdefault(parts[0], []).append(parts)
    for phrases in out.values():
        phrases.sort(key=len, reverse=True)
    return out


_RELATED = _build()
_PHRASES = _phrases()
_FRAMING = frozenset(stem(w) for w in lexicon.FRAMING.split())
_YEAR = re.compile(r"^(?:19|20)\d\d$")


def related(term: str) -> dict[str, float]:
    """Terms that stand for `term` in other words, with the credit each earns."""
    return _RELATED.get(term, {})


def framing(term: str) -> bool:
    """A word or a year that places a question in time rather than saying what it asks."""
    return term in _FRAMING or bool(_YEAR.match(term))
