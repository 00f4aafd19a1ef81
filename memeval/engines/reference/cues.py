"""Cues in an item's wording that say how much it matters, read once when it is written.

Generic English markers, none tied to a domain: a standing order ("always", "never", "must",
"instead"), an alarming event ("failed", "outage", "spike", "47x"), a stated change ("updated",
"now", "no longer"), a speaker saying who they are ("I'm ...", "I lead ...", "my badge ..."),
and a question, which asserts nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memeval.engines.reference.text import sentences


class _Marker:
    """A lowercase pattern matched regardless of case, at a third of `re.IGNORECASE`'s cost.

    Every write reads these four over its whole text, and a case-insensitive alternation is
    slow: its literals cannot reject a position early. ASCII text lowered once and matched
    case-sensitively finds exactly what `re.IGNORECASE` finds (no ASCII letter folds to
    anything else), so only other text pays for it.
    """

    def __init__(self, pattern: str) -> None:
        if pattern != pattern.lower():
            raise ValueError(f"a marker pattern is lowercase: {pattern!r}")
        self._lowered = re.compile(pattern)
        self._any_case = re.compile(pattern, re.IGNORECASE)

    def found(self, text: str, lowered: str | None) -> bool:
        """`lowered`: the text lowered when it is ASCII, else None."""
        if lowered is not None:
            return self._lowered.search(lowered) is not None
        return self._any_case.search(text) is not None


_DIRECTIVE = _Marker(
    r"\b(?:always|never|must|should|don'?t|do not|prefers?|preferred|instead|make sure"
    r"|from now on|remember|avoid|required)\b"
)
_ALARM = _Marker(
    r"\b(?:fail(?:ed|ure|ures|ing|s)?|errors?|outages?|incidents?|critical|urgent|broken|broke"
    r"|crash(?:ed|es)?|spiked?|anomal(?:y|ies|ous)|unusual|unexpected(?:ly)?|alerts?|breach"
    r"|regression|first time|\d+(?:\.\d+)?x)\b"
)
# "now" but not "for now"; the look-behind sits after the word, so every alternative opens
# with a literal and the pattern scans as fast as the others
_CHANGE = _Marker(
    r"\b(?:now(?<!for now)|updated?|changed?|change of plan|moved?|switched|instead|no longer"
    r"|from now on|correct(?:ed|ion)|revised|raised|lowered|replaced|anymore|going forward)\b"
)
_PERSONAL = _Marker(
    r"\b(?:i'?m|i am|my name|call me|i (?:work|lead|live|manage|run|head|own|moved|relocate)"
    r"|my (?:role|job|title|team|partner|wife|husband|family|home|office|badge|email|phone"
    r"|address|birthday|manager))\b"
)


@dataclass(frozen=True)
class Cues:
    question: bool = False
    directive: bool = False
    alarm: bool = False
    change: bool = False
    personal: bool = False  # first person about oneself; whether that is the user is the caller's


def read_cues(text: str, spoken: bool = False) -> Cues:
    """`spoken`: a line of a conversation between people, where one that tells and then asks
    ("I went hiking! Have you been?") tells as much as it asks, so only a line whose every
    sentence asks is a question; a turn to the agent that ends in a question is a request."""
    if spoken:
        parts = sentences(text)
        question = bool(parts) and all(part.endswith("?") for part in parts)
    else:
        question = text.rstrip().endswith("?")
    lowered = text.lower() if text.isascii() else None
    return Cues(
        question=question,
        directive=_DIRECTIVE.found(text, lowered),
        alarm=_ALARM.found(text, lowered),
        change=_CHANGE.found(text, lowered),
        personal=_PERSONAL.found(text, lowered),
    )
