"""The lifecycle store: turns, documents, learnings and beliefs of one tenant.

Everything is indexed the moment it is written, so `list` shows a write at once and the next
`pre_turn` can already recall it. Documents are cut into passages of a few sentences: a pack
has room for the passage that answers, not for every long document whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from memeval.engines.reference.beliefs import SlotBook, extract
from memeval.engines.reference.cues import Cues, read_cues
from memeval.engines.reference.index import LexicalIndex
from memeval.engines.reference.text import sentences, terms
from memeval.engines.types import MemoryItem, Turn

PASSAGE_CHARS = 480

TurnKey = tuple[str, float, str]  # (role, epoch seconds, whitespace-normalised text)


class ItemKind(StrEnum):
    turn = "turn"
    document = "document"
    learning = "learning"
    belief = "belief"


@dataclass
class Item:
    id: str  # what `list` shows: one document id covers all its passages
    doc: int  # position in the store and id in the index
    kind: ItemKind
    text: str
    at: datetime | None
    title: str = ""
    agent: str | None = None
    thread: str | None = None
    role: str | None = None
    speaker: str | None = None  # who said a turn, when a thread has several people
    source_id: str | None = None  # the case's id for the write, echoed in `Pack.unit_ids`
    confidence: float = 1.0
    tools: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()  # a belief's evidence: the items it was distilled from
    terms: frozenset[str] = frozenset()
    said: frozenset[str] = frozenset()  # the terms of its words alone, without who said them
    cues: Cues = field(default_factory=Cues)
    turn_key: TurnKey | None = None  # how a turn handed back in `in_prompt` is recognised
    time: float = 0.0  # seconds since the epoch, 0 when undated: a sort key that is never None
    position: int = 0  # its place in its thread
    retired: bool = False  # replaced: a belief by a later build, a document by a new version


def turn_key_of(role: str, at: datetime, text: str) -> TurnKey:
    return role, at.timestamp(), " ".join(text.split())


def key_of(turn: Turn) -> TurnKey:
    return turn_key_of(turn.role, turn.at, turn.text)


@dataclass
class Memory:
    index: LexicalIndex = field(default_factory=LexicalIndex)
    items: list[Item] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    by_turn: dict[TurnKey, int] = field(default_factory=dict)
    standing: list[Item] = field(default_factory=list)  # learnings and live beliefs
    notable: list[Item] = field(default_factory=list)  # standing orders, alarms, the user's own
    ingested: dict[str, list[Item]] = field(default_factory=dict)  # document id -> passages
    threads: dict[str, list[Item]] = field(default_factory=dict)
    book: SlotBook = field(default_factory=SlotBook)  # what turns and documents state
    _span: tuple[float, float] | None = None  # earliest and latest item time

    def _add(self, item: Item, index_text: str) -> Item:
        words = terms(index_text)
        item.terms = frozenset(words)
        item.said = item.terms - frozenset(terms(item.speaker)) if item.speaker else item.terms
        item.cues = read_cues(item.text, spoken=bool(item.speaker))
        item.time = item.at.timestamp() if item.at is not None else 0.0
        if item.kind is ItemKind.turn and item.at is not None and item.role is not None:
            item.turn_key = turn_key_of(item.role, item.at, item.text)
        self.items.append(item)
        self.index.add(item.doc, words)
        if item.kind in (ItemKind.learning, ItemKind.belief):
            self.standing.append(item)
        elif item.cues.directive or item.cues.alarm or about_user(item):
            self.notable.append(item)
        if item.thread is not None:
            lines = self.threads.setdefault(item.thread, [])
            item.position = len(lines)
            lines.append(item)
        if item.kind is ItemKind.document or (item.kind is ItemKind.turn and not item.speaker):
            # a named speaker's line is a transcript: what someone said, never a slot
            source = _source(item)
            self.book.add(extract(item.text, item.at, item.doc, source, item.id))
        if item.at is not None:
            first, last = self._span or (item.time, item.time)
            self._span = min(first, item.time), max(last, item.time)
        return item

    def recency(self, item: Item) -> float:
        """0 for the oldest item, 1 for the newest; undated items sit in the middle."""
        if item.at is None or self._span is None or self._span[1] <= self._span[0]:
            return 0.5
        first, last = self._span
        return (item.time - first) / (last - first)

    def ingest(self, source: MemoryItem) -> str:
        """Store a document or learning; the same id again replaces the earlier version."""
        for old in self.ingested.pop(source.id, []):
            old.retired = True
        self.standing = [i for i in self.standing if not i.retired]
        kind = ItemKind(source.kind)
        chunks = [source.text] if kind is ItemKind.learning else passages(source.text)
        for chunk in chunks:
            item = Item(
                id=source.id,
                doc=len(self.items),
                kind=kind,
                text=chunk,
                at=source.at,
                title=source.title,
                agent=source.agent,
                confidence=source.confidence,
                source_id=source.id,
            )
            self.ingested.setdefault(source.id, []).append(
                self._add(item, f"{source.title} {chunk}")
            )
        self.written.append(source.id)
        return source.id

    def log_turn(self, agent: str, thread: str, turn: Turn) -> str:
        turn_id = f"{thread}#{len(self.threads.get(thread, ())) + 1}-{turn.role}"
        tools = tuple(f"{call.name}#{call.id}" for call in turn.tool_calls)
        text, speaker = spoken(turn)
        item = Item(
            id=turn_id,
            doc=len(self.items),
            kind=ItemKind.turn,
            text=text,
            at=turn.at,
            agent=agent,
            thread=thread,
            role=turn.role,
            speaker=speaker,
            source_id=turn.id,
            tools=tools,
        )
        # the speaker is indexed with the words, so "what did Caroline say" finds her turns
        said = [speaker or "", text, *(c.name for c in turn.tool_calls)]
        self._add(item, " ".join(said))
        key = item.turn_key
        if key is not None:
            self.by_turn[key] = item.doc
        self.written.append(turn_id)
        return turn_id

    def add_belief(self, text: str, at: datetime | None, sources: list[str]) -> Item:
        item = Item(
            id=f"belief#{len(self.items)}",
            doc=len(self.items),
            kind=ItemKind.belief,
            text=text,
            at=at,
            sources=tuple(sources),
        )
        return self._add(item, text)

    def neighbours(self, item: Item, reach: int = 1) -> list[tuple[int, Item]]:
        """The lines up to `reach` before and after a turn in its thread, with their distance:
        what it answers, and what it prompts."""
        if item.kind is not ItemKind.turn or item.thread is None:
            return []
        lines = self.threads[item.thread]
        at = item.position
        first, last = max(0, at - reach), min(len(lines), at + reach + 1)
        return [(abs(i - at), lines[i]) for i in range(first, last) if i != at]

    def unanswered(self, item: Item) -> bool:
        """A user's question with nothing after it in its thread carries no information."""
        if item.kind is not ItemKind.turn or item.role != "user" or item.thread is None:
            return False
        return item.cues.question and self.threads[item.thread][-1] is item

    def retire_beliefs(self) -> None:
        """A new build replaces every earlier belief. Retired ones stay listed but unseen, and
        leave the index's statistics: a build repeated (a retried request) must rank as one."""
        for item in self.standing:
            if item.kind is ItemKind.belief:
                item.retired = True
                self.index.remove(item.doc, item.terms)
        self.standing = [i for i in self.standing if not i.retired]


def _source(item: Item) -> str:
    return f"agent:{item.agent}" if item.kind is ItemKind.turn else f"document:{item.id}"


def about_user(item: Item) -> bool:
    """The user saying who they are: profile facts a later session must not lose."""
    return item.role == "user" and item.cues.personal and not item.cues.question


def spoken(turn: Turn) -> tuple[str, str | None]:
    """What was said and who said it. A transcript line that opens with its own speaker's
    name ("Caroline: I went ...") is that person talking, not a `Caroline` slot with a value:
    the label is taken as the speaker and the rest as what they said."""
    text = turn.text
    label, colon, rest = text.partition(":")
    speaker = turn.speaker
    if speaker and colon and rest.strip() and label.strip().casefold() == speaker.casefold():
        return rest.strip(), speaker
    return text, speaker


def passages(text: str) -> list[str]:
    """Whole sentences grouped up to about `PASSAGE_CHARS`, so no fact is cut in half."""
    out: list[str] = []
    current = ""
    for sentence in sentences(text):
        if current and len(current) + 1 + len(sentence) > PASSAGE_CHARS:
            out.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        out.append(current)
    return out or [text.strip()]
