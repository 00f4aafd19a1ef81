"""Distilling beliefs from what was said: one current value per slot, disagreement kept.

Extraction is a handful of generic English sentence shapes, tried in order on every clause:

1. a change with the slot first: "the budget was raised to 8000", "standup moved to Thursdays";
2. a change with the verb first: "we raised the budget to 8000" (any one-word actor);
3. a copula: "our database is Postgres 14", "the region is now eu-west-2";
4. a measure verb: "refunds take five business days", "the plan costs 40 dollars";
5. a label: "budget: 6500".

A slot is the phrase before the verb, stripped of determiners and filler ("actually", "so"),
keyed by its stemmed content words; two keys with the same last word where one contains the
other ("region", "cloud region") are one slot. The newest statement wins. Earlier values are
an *update* when the newest statement says so (a change verb, "now", or a "correction:" /
"update:" lead) or when every value came from one source; otherwise the sources *disagree*,
and the belief says so, naming every value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from memeval.engines.reference.text import STOPWORDS, clauses, normalise, stem, tokens
from memeval.engines.types import Belief

_CHANGE = (
    r"(?:change|move|raise|lower|increase|decrease|reduce|bump|update|correct|switch|shift"
    r"|migrate|cut|extend|push|revise|drop|upgrade|downgrade|adjust|reschedule|rename|set)"
    r"(?:s|es|d|ed|ped)?"
)
_TO = r"\s+(?:from\s+(?P<old>.+?)\s+)?to\s+(?P<value>.+)$"
_SLOT = r"(?P<slot>[^:]{2,60}?)"
_SLOT_FIRST_CHANGE = (
    rf"^{_SLOT}\s+(?:(?:has|have)\s+been\s+|(?:was|were|is|are|got|has|have)\s+)?"
    rf"(?:now\s+|just\s+)?{_CHANGE}{_TO}"
)
_VERB_FIRST_CHANGE = (
    rf"^(?:[\w']+\s+)?(?:(?:have|has)\s+)?(?:just\s+|now\s+)?{_CHANGE}\s+"
    rf"(?P<slot>.{{2,60}}?){_TO}"
)
_COPULA = (
    rf"^{_SLOT}\s+(?:is|are|was|were|will\s+be|remains?|stays?|becomes?|became)"
    r"\s+(?P<value>.+)$"
)
_MEASURE = rf"^{_SLOT}\s+(?:takes?|costs?|requires?)\s+(?P<value>.+)$"
_LABEL = r"^(?P<slot>[^:]{2,40}):\s+(?P<value>.+)$"
_SHAPES: tuple[tuple[re.Pattern[str], bool], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), change)
    for pattern, change in (
        (_SLOT_FIRST_CHANGE, True),
        (_VERB_FIRST_CHANGE, True),
        (_COPULA, False),
        (_MEASURE, False),
        (_LABEL, False),
    )
)
_LEAD = re.compile(
    r"^(?:(?:correction|corrected|update|updated)\s*[:,\-]|actually,?|scratch that,?)\s*",
    re.IGNORECASE,
)  # the speaker marks the clause as replacing something said before
_OPENER = re.compile(r"^(?:ok|okay|so|well|also|noted|right|sure|great|thanks)\s*[:,!\-]\s*", re.I)
_FILLER = frozenset(
    "the our my your their its this that a an actually so also ok okay well and but then "
    "now just please note".split()
)
_PRONOUNS = frozenset("i we you it they he she this that there here which what who".split())
_VALUE_END = re.compile(
    r"\s*(?:,|;|\s+(?:because|since|but|so)\s|\s+and\s+(?:i|we|you|he|she|they|it)\b)",
    re.IGNORECASE,
)
_NOW = re.compile(r"^now\s+|\s+now$", re.IGNORECASE)  # "is now X", "is X now": a change
_VERB_ENDING = re.compile(r"^\w{3,}ed$")  # "failed", "returned": a clause, not a thing
MAX_SLOT_WORDS = 6
MAX_VALUE_WORDS = 10


@dataclass(frozen=True)
class Statement:
    slot: str
    key: tuple[str, ...]
    value: str
    at: datetime | None
    seq: int
    source: str  # who said it: a document, or an agent's conversations
    origin: str  # the item it was read from
    change: bool
    event: bool = False  # "the deploy failed: ...": something happened, not a property


def extract(text: str, at: datetime | None, seq: int, source: str, origin: str) -> list[Statement]:
    out: list[Statement] = []
    for clause in clauses(text):
        if clause.rstrip().endswith("?"):
            continue  # a question asserts nothing
        statement = _statement(clause.strip(), at, seq, source, origin)
        if statement is not None:
            out.append(statement)
    return out


def _statement(
    clause: str, at: datetime | None, seq: int, source: str, origin: str
) -> Statement | None:
    clause = clause[m.end() :] if (m := _OPENER.match(clause)) else clause
    lead = _LEAD.match(clause)
    body = clause[lead.end() :] if lead else clause
    body = body.rstrip(" .!?")
    for shape, change in _SHAPES:
        match = shape.match(body)
        if match is None:
            continue
        slot, event = _slot(match.group("slot"))
        value = _value(match.group("value"))
        if slot is None or not value or (shape.pattern == _LABEL and _spoken(value)):
            continue
        value, now = _NOW.subn("", value)
        is_change = change or bool(lead) or bool(now)
        key = tuple(stem(w) for w in tokens(slot) if w not in STOPWORDS)
        return Statement(slot, key, value, at, seq, source, origin, is_change, event)
    return None


_PERSONS = frozenset("i i'm i've we we're you you're me my our your he she they".split())


def _spoken(value: str) -> bool:
    """A label followed by someone talking ("Caroline: I went to a support group") is a line
    of a transcript, not a `slot: value` row: rows do not speak in the first or second person."""
    return any(w.lower().strip(",.!?") in _PERSONS for w in value.split())


def _slot(raw: str) -> tuple[str | None, bool]:
    """The slot phrase, and whether it names an event ("npm install failed") not a thing."""
    phrase = raw.rsplit(",", 1)[-1].strip()
    words = phrase.split()
    while words and words[0].lower().strip("'") in _FILLER:
        words = words[1:]
    if not words or len(words) > MAX_SLOT_WORDS or words[0].lower() in _PRONOUNS:
        return None, False
    last = tokens(words[-1])
    if not last or last[-1] in STOPWORDS:
        return None, False  # a noun phrase ends in a noun, not in "from" or "they"
    return " ".join(words), bool(_VERB_ENDING.search(last[-1]))


def _value(raw: str) -> str:
    value = _VALUE_END.split(raw, maxsplit=1)[0]
    words = value.split()[:MAX_VALUE_WORDS]
    return " ".join(words).strip(" .!?\"'")


@dataclass
class BeliefRecord:
    slot: str
    statements: list[Statement] = field(default_factory=list)

    @property
    def latest(self) -> Statement:
        return self.statements[-1]

    @property
    def values(self) -> list[str]:
        """Distinct values, oldest first; one that restates another (6500 / 6500 dollars) is one."""
        out: list[str] = []
        for st in self.statements:
            norm = normalise(st.value)
            for i, seen in enumerate(out):
                if norm in normalise(seen) or normalise(seen) in norm:
                    out[i] = st.value
                    break
            else:
                out.append(st.value)
        return out

    @property
    def others(self) -> list[str]:
        latest = normalise(self.latest.value)
        return [v for v in self.values if latest not in normalise(v) and normalise(v) not in latest]

    @property
    def outdated(self) -> list[str]:
        """Values some later statement replaced (see `SlotBook.superseded`)."""
        out: list[str] = []
        for n, st in enumerate(self.statements):
            if _differ(st.value, self.latest.value) and any(
                _differ(later.value, st.value) and (later.change or later.source == st.source)
                for later in self.statements[n + 1 :]
            ):
                out.append(st.value)
        return out

    @property
    def contested(self) -> bool:
        if not self.others or self.latest.change:
            return False
        return len({st.source for st in self.statements}) > 1

    def to_belief(self) -> Belief:
        return Belief(
            subject=self.slot,
            value=self.latest.value,
            sources=list(dict.fromkeys(st.origin for st in self.statements)),
            disagreement=self.others if self.contested else [],
        )

    def bullet(self) -> str:
        """For packs: the current value alone, unless sources disagree (then all of them)."""
        if self.contested:
            return f"{self.slot}: sources disagree: {' vs '.join(self.values)}"
        return f"{self.slot}: {self.latest.value}"

    def describe(self) -> str:
        """For `inspect`: the bullet, plus what it replaced."""
        if self.others and not self.contested:
            return f"{self.bullet()} (earlier: {', '.join(self.others)})"
        return self.bullet()


Key = tuple[str, ...]


def _differ(a: str, b: str) -> bool:
    """Two values differ unless one restates the other ("6500" / "6500 dollars")."""
    x, y = normalise(a), normalise(b)
    return x not in y and y not in x


class SlotBook:
    """Statements grouped by slot as they arrive, oldest first within each slot."""

    def __init__(self) -> None:
        self.slots: dict[Key, BeliefRecord] = {}
        self.events: list[Statement] = []  # stated, but no slot: they replace nothing
        self._by_item: dict[int, list[tuple[Key, Statement]]] = {}
        self._by_head: dict[str, list[Key]] = {}

    def add(self, statements: list[Statement]) -> None:
        for st in statements:
            if st.event:
                self.events.append(st)
                continue
            key = _canonical(st.key, self.slots, self._by_head.get(st.key[-1], ()))
            record = self.slots.get(key)
            if record is None:
                record = self.slots[key] = BeliefRecord(st.slot)
                self._by_head.setdefault(key[-1], []).append(key)
            record.statements.append(st)
            record.statements.sort(key=_when)
            self._by_item.setdefault(st.seq, []).append((key, st))

    def statements(self) -> list[Statement]:
        held = [st for r in self.slots.values() for st in r.statements]
        return sorted([*held, *self.events], key=_when)

    def records(self) -> list[BeliefRecord]:
        return list(self.slots.values())

    def superseded(self, item: int) -> list[int]:
        """Items that replaced something the item states: a newer value in the same slot
        that says it is a change, or that comes from the same source (people update
        themselves). Empty when nothing did."""
        out: list[int] = []
        for key, st in self._by_item.get(item, ()):
            for later in self.slots[key].statements:
                if (
                    _when(later) > _when(st)
                    and _differ(later.value, st.value)
                    and (later.change or later.source == st.source)
                ):
                    out.append(later.seq)
        return out

    def mentions_outdated(self, terms: frozenset[str], text: str, at: datetime | None) -> list[int]:
        """Items holding a slot's latest value, when the text, written before it, names that
        slot and an older value of it. Empty when it names none.

        This catches restatements no sentence shape extracts ("Recorded a monthly budget of
        5000 dollars"): an item written before the change that still carries the old value.
        An older value counts as named when a later statement replaced it, or, when the
        latest statement is a change, when the text gives a value of the same kind as the
        new one (a weekday, a month, a clock time) but not the new one: "the bin collection
        moves to Monday" replaces "they collect the bins every Friday" without naming Friday.
        """
        norm = ""
        out: list[int] = []
        for head in terms & self._by_head.keys():
            for key in self._by_head[head]:
                record = self.slots[key]
                latest = record.latest
                if not set(key) <= terms or (at is not None and latest.at and at >= latest.at):
                    continue
                norm = norm or normalise(text)
                if normalise(latest.value) in norm:
                    continue
                if any(normalise(v) in norm for v in record.outdated) or (
                    latest.change and _rival_kind(latest.value, norm)
                ):
                    out.append(latest.seq)
        return out


_KINDS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b",
        r"\b(?:january|february|march|april|may|june|july|august|september|october"
        r"|november|december)\b",
        r"\b\d{1,2} \d{2}\b",  # a clock time, as `normalise` writes 09:30
    )
)


def _rival_kind(value: str, text: str) -> bool:
    """The (normalised) text gives another value of the kind `value` is: a weekday, a
    month or a clock time."""
    norm = normalise(value)
    for kind in _KINDS:
        new = {_singular(m) for m in kind.findall(norm)}
        if new and {_singular(m) for m in kind.findall(text)} - new:
            return True
    return False


def _singular(day: str) -> str:
    return day.removesuffix("s") if day.endswith("days") else day


def _when(st: Statement) -> tuple[bool, float, int]:
    return st.at is not None, st.at.timestamp() if st.at else 0.0, st.seq


def _canonical(key: Key, records: dict[Key, BeliefRecord], same_head: Iterable[Key]) -> Key:
    """A known slot with the same head word where one key's words contain the other's.

    Only the slots sharing the head word are compared (`same_head`), so a write costs the
    same however many slots are already known."""
    if key in records:
        return key
    words = set(key)
    for known in same_head:
        if set(known) <= words or words <= set(known):
            return known
    return key
