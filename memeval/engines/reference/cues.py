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

_DIRECTIVE = re.compile(
    r"\b(?:always|never|must|should|don'?t|do not|prefers?|preferred|instead|make sure"
    r"|from now on|remember|avoid|required)\b",
    re.IGNORECASE,
)
_ALARM = re.compile(
    r"\b(?:fail(?:ed|ure|ures|ing|s)?|errors?|outages?|incidents?|critical|urgent|broken|broke"
    r"|crash(?:ed|es)?|spiked?|anomal(?:y|ies|ous)|unusual|unexpected(?:ly)?|alerts?|breach"
    r"|regression|first time|\d+(?:\.\d+)?x)\b",
    re.IGNORECASE,
)
_CHANGE = re.compile(
    r"(?<!for )\bnow\b|\b(?:updated?|changed?|change of plan|moved?|switched|instead|no longer"
    r"|from now on|correct(?:ed|ion)|revised|raised|lowered|replaced|anymore|going forward)\b",
    re.IGNORECASE,
)


_PERSONAL = re.compile(
    r"\b(?:i'?m|i am|my name|call me|i (?:work|lead|live|manage|run|head|own|moved|relocate)"
    r"|my (?:role|job|title|team|partner|wife|husband|family|home|office|badge|email|phone"
    r"|address|birthday|manager))\b",
    re.IGNORECASE,
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
    return Cues(
        question=question,
        directive=bool(_DIRECTIVE.search(text)),
        alarm=bool(_ALARM.search(text)),
        change=bool(_CHANGE.search(text)),
        personal=bool(_PERSONAL.search(text)),
    )
