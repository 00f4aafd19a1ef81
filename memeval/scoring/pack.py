"""Scoring one probe against the pack an engine returned.

Every match ignores case; by default it is a substring match (`Match` offers whole words and
numbers). Positions count *units*: the non-empty bullet and prose lines after the pack's title,
headings excluded, in reading order.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache

from memeval.llm.prompt import UNKNOWN, is_unknown
from memeval.results import ProbeResult
from memeval.suites.common import Match
from memeval.suites.scenario import Probe

_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if
    in into is it its me my no not of on or our should so than that the their them then there
    these they this to us was we were what when where which who whom why will with would you
    your about after again any all also am before being both each few more most other over
    same some such too very just only own up down out off once here s t""".split()
)


def units(markdown: str) -> list[str]:
    """The scoreable lines of a pack: bullets and prose, without the title or any heading."""
    out: list[str] = []
    for raw in markdown.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        out.append(line)
    return out


@lru_cache(maxsize=4096)
def _pattern(needle: str, match: Match) -> re.Pattern[str]:
    """A letter edge must not be glued to another letter or digit (`word`, and `number` too);
    under `number` a digit edge must not be continued by another digit, nor by a decimal or
    group separator and a digit (`4.1` is not in `0.4.1`, `£9` is not in `£95` nor `£9.50`,
    but `4.1` is in `v4.1`)."""
    body = re.escape(needle.casefold())
    head, tail = needle[:1], needle[-1:]
    numeric = match is Match.number
    before = after = ""
    if numeric and head.isdigit():
        before = r"(?<!\d)(?<!\d[.,])"
    elif head.isalnum():
        before = r"(?<!\w)"
    if numeric and tail.isdigit():
        after = r"(?!\d)(?![.,]\d)"
    elif tail.isalnum():
        after = r"(?!\w)"
    return re.compile(before + body + after)


def contains(text: str, needle: str, match: Match = Match.substring) -> bool:
    if match is Match.substring:
        return needle.casefold() in text.casefold()
    return _pattern(needle, match).search(text.casefold()) is not None


def rank(lines: list[str], needle: str, match: Match = Match.substring) -> int | None:
    """1-based position of the first unit holding `needle`, or None."""
    for i, line in enumerate(lines, start=1):
        if contains(line, needle, match):
            return i
    return None


_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalise_answer(text: str) -> list[str]:
    """SQuAD's answer normalisation as LoCoMo applies it: lower case, commas and punctuation
    out, articles (and LoCoMo's `and`) out, whitespace collapsed; returns the tokens."""
    text = text.casefold().replace(",", "").translate(_PUNCT)
    return _ARTICLES.sub(" ", text).split()


def token_f1(prediction: str | None, references: list[str]) -> float:
    """The best token F1 of `prediction` against any reference (0.0 for no prediction)."""
    guess = normalise_answer(prediction or "")
    best = 0.0
    for reference in references:
        gold = normalise_answer(reference)
        if not gold or not guess:
            best = max(best, float(gold == guess))
            continue
        common = sum((Counter(guess) & Counter(gold)).values())
        if common:
            precision, recall = common / len(guess), common / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def gold_answers(probe: Probe) -> list[str]:
    """What F1 compares an answer with: the probe's `answer` (else its `expect` joined) and
    every `accept` wording; an abstain probe's gold is an abstention."""
    if probe.abstain:
        return [UNKNOWN]
    return [probe.answer or " ".join(probe.expect), *probe.accept]


def content_words(text: str) -> set[str]:
    return {w.strip("'-") for w in _WORD.findall(text.casefold())} - STOPWORDS - {""}


def extractive_answer(lines: list[str], question: str) -> str:
    """The unit sharing the most non-stopword words with the question; earliest on ties."""
    asked = content_words(question)
    best, best_overlap = "", 0
    for line in lines:
        overlap = len(asked & content_words(line))
        if overlap > best_overlap:
            best, best_overlap = line, overlap
    return best


def says_abstain(answer: str | None) -> bool:
    """An answer that says "never said": none at all (an extractive answer finds no unit), or
    the answer prompt's clear `unknown` (the rule that grades a fixture's `abstain` query)."""
    return not answer or is_unknown(answer)


def grade_answer(answer: str | None, probe: Probe) -> bool:
    """Right when it holds every expected string (or an accepted wording) and no stale value;
    for an abstain probe, when it abstains and names no `forbidden` string."""
    m = probe.match_for
    if probe.abstain:
        return says_abstain(answer) and not any(
            contains(answer or "", f, m(f)) for f in probe.forbidden
        )
    if not answer:
        return False
    right = all(contains(answer, e, m(e)) for e in probe.expect) or any(
        contains(answer, a, m(a)) for a in probe.accept
    )
    return right and not any(presents_stale([answer], s, probe) for s in probe.stale)


OUTDATED = re.compile(
    r"\b(no longer|not any more|anymore|used to|outdated|out of date|obsolete|formerly|"
    r"previously|superseded|replaced|changed from|was changed|old value|no more)\b",
    re.I,
)
"""Words that call a value outdated: under `stale_as: claim`, a unit saying them about a
stale value states that it is stale, which is right."""


def presents_stale(texts: list[str], value: str, probe: Probe) -> bool:
    return stale_rank(texts, value, probe) is not None


def stale_rank(lines: list[str], value: str, probe: Probe) -> int | None:
    """The first unit presenting `value` as current: any unit holding it, or, for
    `stale_as: claim`, one that does not call it outdated."""
    m = probe.match_for(value)
    for i, line in enumerate(lines, start=1):
        if contains(line, value, m) and not (probe.stale_as == "claim" and OUTDATED.search(line)):
            return i
    return None


def fresh_first(lines: list[str], probe: Probe) -> tuple[bool | None, bool | None]:
    """(fresh first, stale first) over a probe whose fact changed; (None, None) otherwise.

    Every expected string counts, not just the first. Fresh first: each is present and
    precedes every superseded value that appears. Stale first: some superseded value appears
    before some expected string (or with one missing).
    """
    if not probe.stale or not probe.expect:
        return None, None
    fresh = [rank(lines, e, probe.match_for(e)) for e in probe.expect]
    stale_ranks = [r for s in probe.stale if (r := stale_rank(lines, s, probe)) is not None]
    first_stale = min(stale_ranks, default=None)
    present = all(r is not None for r in fresh)
    last_fresh = max((r for r in fresh if r is not None), default=None)
    is_fresh = present and (first_stale is None or (last_fresh or 0) < first_stale)
    is_stale = first_stale is not None and (not present or first_stale < (last_fresh or 0))
    return is_fresh, is_stale


def hit_rank(lines: list[str], probe: Probe) -> int | None:
    """How many leading units a reader needs to see every expected string: hit@k is this
    within k. A pack that holds the whole tenant hits, but late; this is what tells it apart
    from one that puts the answer first."""
    if not probe.expect:
        return None
    ranks = [rank(lines, e, probe.match_for(e)) for e in probe.expect]
    return None if any(r is None for r in ranks) else max(r for r in ranks if r is not None)


def captured(derived: list[str], probe: Probe) -> bool:
    """Some fact or belief the engine derived holds every expected string."""
    return any(all(contains(text, e, probe.match_for(e)) for e in probe.expect) for text in derived)


def score_pack(
    probe: Probe, markdown: str, result: ProbeResult, abstained: bool = False
) -> ProbeResult:
    """Fill in the pack metrics of `result` for `probe`; the caller sets phase and answers.

    An abstain probe hits when the pack abstains: marked so by the engine, or no unit at all
    (the fixtures' rule: abstained, or no hits)."""
    lines = units(markdown)
    body = "\n".join(lines)
    m = probe.match_for
    leaked = [f for f in probe.forbidden if contains(markdown, f, m(f))]
    if probe.abstain:
        hit = abstained or not lines
        if probe.abstain_by == "no_forbidden":  # without a model: the wrong answer is absent
            hit = hit or not leaked
    else:
        hit = bool(probe.expect) and all(contains(body, e, m(e)) for e in probe.expect)
    is_fresh, is_stale = fresh_first(lines, probe)
    answer = extractive_answer(lines, probe.question)
    return result.model_copy(
        update={
            "pack": markdown,
            "hit": hit,
            "abstained": (abstained or not lines) if probe.abstain else None,
            "rank": rank(lines, probe.expect[0], m(probe.expect[0])) if probe.expect else None,
            "hit_rank": hit_rank(lines, probe),
            "fresh_first": is_fresh,
            "stale_first": is_stale,
            "leaked": leaked,
            "extractive": answer,
            "extractive_ok": grade_answer(answer, probe),
            "extractive_f1": token_f1(answer, gold_answers(probe)),
        }
    )
