"""Choosing what goes into a context pack, and in what order.

Every item gets one score: relevance to the pack's query (hybrid lexical, as for facts) plus
smaller shares of importance and recency. Items are taken best first until the token budget is
full, then shown in the fixed section order of `memeval.engines.pack`; choosing within the
budget here means the renderer never has to drop a chosen item.

- *Importance* without a query is what a cold start should see first: learnings and beliefs,
  standing orders (directive wording: always, never, must, prefer, instead...), alarming events
  (failed, outage, spike, "47x"...), the user saying who they are ("I'm ...", "my badge ..."),
  documents a little (a source of record outranks chatter that matches as well), and items
  whose words are rare in this tenant (novelty).
- *Updates first*: an older statement ranks right below a newer, nearly as relevant one on the
  same topic, which takes its place; and a turn whose stated value was later replaced (see
  `beliefs.SlotBook`) is left out, since the pack shows the value that replaced it; unless the
  question is put in the past ("what was the queue length when the page fired?"): then it
  ranks right below what replaced it, which joins the pack with it, so the current value is
  still read first.
- *Matches lead*: with a query, items scoring below those that match it well are shown after
  every section, under "Also on record" (see `_lead_floor`): a recent turn that only shares a
  word must not be read before an older document that answers.
- A question is weak evidence: a turn ending in "?" counts half, and never pushes a statement
  below it.
- *Disagreement*: leading items from different sources that give different amounts of the
  same thing are marked "sources disagree" (see `disagreement`).
- Never shown: turns the model still has in its prompt, the turn being answered, beliefs
  drawn only from turns in the prompt, questions nobody answered, and the same words a second
  time (a repeated reply or request only takes room from what differs).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from memeval.engines.pack import (
    AGENT_HISTORY,
    CHARS_PER_TOKEN,
    DOCUMENTS,
    EARLIER,
    LEARNINGS,
    TEAM,
    Section,
    render,
    turn_bullet,
)
from memeval.engines.reference.disagreement import notes
from memeval.engines.reference.index import ResolvedQuery, coverage
from memeval.engines.reference.memory import Item, ItemKind, Memory, TurnKey, about_user, key_of
from memeval.engines.reference.text import normalise, terms, tokens
from memeval.engines.types import Pack, Turn

DEFAULT_BUDGET = 1500
SEARCH_LIMIT = 100
RECENT_WINDOW = 150  # the newest items are always considered, matched or not
NOTABLE_WINDOW = 100  # and so are the newest standing orders and alarms
QUESTION_DISCOUNT = 0.5
UPDATE_BAND = 0.6  # a newer item this relevant (relative to an older one) goes first...
CHANGE_BAND = 0.3  # ...or only this relevant when it is worded as a change
UPDATE_WINDOW = 40  # only the most relevant items compete on recency
NEIGHBOUR_SHARE = 0.5  # of a match's relevance that the next line of its conversation gains...
NEIGHBOUR_REACH = 4  # ...up to this many lines away...
NEIGHBOUR_DECAY = 0.6  # ...each line further getting this share of the one before
TOPIC_SHARE = 0.5  # of the older item's matched query weight that the newer one must share
THREAD_BOOST = 0.3  # the conversation being continued or resumed comes before others
MIN_BULLET_CHARS = 24  # once less room than this is left, no useful bullet still fits
MAX_MISSES = 40  # bullets in a row too long for the room left: the pack is as full as it gets
LEAD_SHARE = 0.5  # of the best relevance that leads (see `_lead_floor`)
OTHER = "Also on record"  # the rest, after every section: not in `SECTION_ORDER`, so last


@dataclass(frozen=True)
class Weights:
    relevance: float
    importance: float
    recency: float


FOCUSED = Weights(1.0, 0.2, 0.1)  # a turn or a compaction: the text in hand leads
BROAD = Weights(1.0, 0.5, 0.25)  # a heading or a session focus: a loose query
COLD = Weights(0.0, 1.0, 0.5)  # nothing asked: what matters and what is new


@dataclass
class Request:
    title: str
    agent: str
    thread: str | None = None
    query: str | None = None
    weights: Weights = FOCUSED
    exclude: set[TurnKey] = field(default_factory=set)
    carry: list[Turn] = field(default_factory=list)  # compaction: dropped turns, kept first
    budget: int = DEFAULT_BUDGET


def build(memory: Memory, req: Request) -> Pack:
    pinned = _carried(memory, req)
    pinned_docs = {doc for doc, _ in pinned}
    query = memory.index.resolve(terms(req.query)) if req.query else None
    ranked, relevance, scores, replaced = _ranked(memory, req, query)
    floor = _lead_floor(ranked, relevance, scores) if query is not None else -math.inf
    current = [i for i in ranked if i.doc not in replaced]
    leading = [i for i in current if relevance[i.doc] > 0] if query is not None else current
    flagged = notes(leading, query)

    said = {normalise(memory.items[doc].text) for doc in pinned_docs if doc >= 0}
    origins: dict[str, list[str]] = {}  # bullet -> the case's ids of the writes behind it

    def chosen() -> Iterator[tuple[str, str]]:
        for doc, bullet in pinned:
            origins[bullet[1]] = _origins(memory, doc)
            yield bullet
        for item in ranked:
            key = normalise(item.text)
            if item.doc not in pinned_docs and key not in said:
                said.add(key)  # the same words again, from another time or thread, add nothing
                line = _bullet(item, req)
                if item.doc in flagged:
                    line = f"{line} ({flagged[item.doc]})"
                origins[line] = _origins(memory, item.doc)
                yield (_section(item, req) if scores[item.doc] >= floor else OTHER), line

    pack = render(req.title, _fit(req.title, chosen(), req.budget), req.budget)
    by_line = {" ".join(bullet.split()): ids for bullet, ids in origins.items()}
    pack.unit_ids = [by_line.get(line[2:], []) for line in _unit_lines(pack.markdown)]
    return pack


def _origins(memory: Memory, doc: int) -> list[str]:
    if doc < 0:
        return []
    item = memory.items[doc]
    return [item.source_id] if item.source_id else []


def _unit_lines(markdown: str) -> list[str]:
    """The pack's units as scoring counts them: non-empty lines that are not headings."""
    return [line for raw in markdown.splitlines() if (line := raw.strip()) and line[0] != "#"]


# ---- scoring ----------------------------------------------------------------------------


def _candidates(memory: Memory, req: Request, query: ResolvedQuery | None) -> dict[int, float]:
    """Item -> relevance, over the items worth scoring: matches, standing items, recent ones."""
    relevance: dict[int, float] = {}
    if query is not None and query.terms:
        hits = memory.index.search(query, SEARCH_LIMIT)
        top = max((s for _, s in hits), default=0.0) or 1.0
        for doc, bm25 in hits:
            cov = coverage(query, memory.items[doc].terms)
            relevance[doc] = 0.5 * bm25 / top + 0.5 * cov
        # A conversation between people stays on a topic for a few lines: the answer to a
        # matching question, or the story a matching remark belongs to, rarely repeats the
        # question's words. So the lines around a match gain part of its relevance, more the
        # closer they are, and a line among several matches rises above one matching alone.
        direct = dict(relevance)
        for doc, rel in direct.items():
            if not memory.items[doc].speaker:
                continue  # the agent's own exchanges pair a request with its reply already
            for distance, near in memory.neighbours(memory.items[doc], NEIGHBOUR_REACH):
                share = NEIGHBOUR_SHARE * NEIGHBOUR_DECAY ** (distance - 1)
                relevance[near.doc] = relevance.get(near.doc, 0.0) + share * rel
    pool = [*memory.standing, *memory.notable[-NOTABLE_WINDOW:], *memory.items[-RECENT_WINDOW:]]
    if req.thread is not None:
        pool.extend(memory.threads.get(req.thread, ()))
    for item in pool:
        relevance.setdefault(item.doc, 0.0)
    return relevance


def _ranked(
    memory: Memory, req: Request, query: ResolvedQuery | None
) -> tuple[list[Item], dict[int, float], dict[int, float], dict[int, list[int]]]:
    """Visible items best first, each one's relevance to the query and final score, and the
    turns whose value was replaced, with what replaced them."""
    relevance = _candidates(memory, req, query)
    replaced = {
        doc: by
        for doc in list(relevance)
        if memory.items[doc].kind is ItemKind.turn and (by := _replacements(memory, doc))
    }
    if query is None or not asks_past(req.query or ""):
        for doc in replaced:
            del relevance[doc]
        replaced = {}
    for by in replaced.values():
        for doc in by:
            relevance.setdefault(doc, 0.0)
    hidden = {memory.items[memory.by_turn[k]].id for k in req.exclude if k in memory.by_turn}
    items = [memory.items[doc] for doc in relevance]
    items = [i for i in items if _visible(i, req, memory, hidden)]
    if query is not None and req.weights is FOCUSED:
        # a question in hand: a derived belief earns its place by matching it
        items = [i for i in items if i.kind is not ItemKind.belief or relevance[i.doc] > 0]
    novelty = _novelty(memory, items) if req.weights.importance >= BROAD.importance else {}
    w = req.weights
    scores: dict[int, float] = {}
    for item in items:
        rel = relevance[item.doc] * (QUESTION_DISCOUNT if item.cues.question else 1.0)
        here = THREAD_BOOST if req.thread is not None and item.thread == req.thread else 0.0
        if item.speaker:
            # a line of a conversation between people: no orders or profile of the agent's
            # user, and every session is as much on record as the last
            scores[item.doc] = w.relevance * rel + here
            continue
        importance = max(_importance(item), novelty.get(item.doc, 0.0))
        scores[item.doc] = (
            w.relevance * rel + w.importance * importance + w.recency * memory.recency(item) + here
        )
    if query is not None and not asks_past(req.query or ""):
        _updates_first(items, scores, relevance, query)
    for doc, by in replaced.items():
        held = [scores[r] for r in by if r in scores]
        if doc in scores and held:
            scores[doc] = min(scores[doc], min(held) - 1e-6)
    ranked = sorted(items, key=lambda i: (scores[i.doc], i.time, i.doc), reverse=True)
    return ranked, relevance, scores, {doc: by for doc, by in replaced.items() if doc in scores}


_PAST = frozenset("was were did had".split())
_NOW = frozenset("now currently current today still latest anymore".split())


def asks_past(question: str) -> bool:
    """Put in the past tense, with no word pulling it to the present: it may ask how things
    stood before a later change."""
    words = set(tokens(question))
    return bool(words & _PAST) and not words & _NOW


def _lead_floor(ranked: list[Item], relevance: dict[int, float], scores: dict[int, float]) -> float:
    """The score an item needs to be shown in its own section rather than after them all.

    Sections render in a fixed order, so a recent turn that merely shares a word would sit
    ahead of the document that answers. The items that match the query nearly as well as the
    best one set the bar (questions aside: their halved score would lower it for everyone);
    taking it on the final score, not on relevance, keeps what ranks above another in a tier
    no lower, so a replacement is never shown after the value it replaced.
    """
    top = max((relevance[i.doc] for i in ranked), default=0.0)
    lead = [
        scores[i.doc]
        for i in ranked
        if relevance[i.doc] >= LEAD_SHARE * top and not i.cues.question
    ]
    return min(lead) if top > 0 and lead else -math.inf


def _replacements(memory: Memory, doc: int) -> list[int]:
    if not memory.book.slots:  # nothing stated a value, so nothing was replaced
        return []
    item = memory.items[doc]
    return memory.book.superseded(doc) or memory.book.mentions_outdated(
        item.terms, item.text, item.at
    )


def _visible(item: Item, req: Request, memory: Memory, hidden: set[str]) -> bool:
    """Whether an item may be shown at all, before any ranking."""
    if item.retired or memory.unanswered(item):
        return False
    if item.kind is ItemKind.learning:
        return item.agent is None or item.agent == req.agent
    if item.kind is ItemKind.belief:
        return any(source not in hidden for source in item.sources)
    key = item.turn_key
    return key is None or key not in req.exclude


def _importance(item: Item) -> float:
    if item.kind is ItemKind.belief:
        return 0.8
    if item.kind is ItemKind.learning:
        return 0.6 + 0.4 * item.confidence
    if item.cues.question:
        return 0.0
    if item.cues.directive or about_user(item):
        return 0.7
    if item.cues.alarm:
        return 0.6
    if item.kind is ItemKind.document:
        return 0.3
    return 0.0


def _novelty(memory: Memory, items: list[Item]) -> dict[int, float]:
    """Mean idf of an item's words, scaled to 0..0.5: rare wording marks an unusual event."""
    raw = {
        i.doc: sum(memory.index.idf(t) for t in i.terms) / len(i.terms)
        for i in items
        if i.terms and i.kind in (ItemKind.turn, ItemKind.document)
    }
    top = max(raw.values(), default=0.0)
    low = min(raw.values(), default=0.0)
    if top <= low:
        return {}
    return {doc: 0.5 * (value - low) / (top - low) for doc, value in raw.items()}


def _updates_first(
    items: list[Item], scores: dict[int, float], relevance: dict[int, float], query: ResolvedQuery
) -> None:
    """An older statement ranks below a newer one on the same topic that is nearly as relevant.

    Same topic: the words they share that matched the query (the query's own or related ones:
    two items matching one question word through different related words may be on different
    topics) carry at least `TOPIC_SHARE` of the query weight the older one matched, so two
    lines sharing only a name or a common word ("Caroline", "great") are not one topic, and
    in a long conversation the older line keeps its place; a newer line worded as a change
    needs only one shared word. Who said a line is not a topic.
    Nearly as relevant: the newer one has at
    least `UPDATE_BAND` of the older one's relevance, or `CHANGE_BAND` when it is worded as a
    change ("updated", "now", "instead"). A value that changed is then read in its newest
    wording first, while an old statement far more relevant than newer chatter keeps its place.

    The newer one takes the older one's score first and the older goes right below it: a
    terse update ("Updated: now from Fernridge") matches less of the question than the full
    statement it replaces, and pushing the statement down to the update's level would sink
    the whole topic under unrelated items that merely share a word with the question.
    """
    dated = [i for i in items if i.at is not None and relevance[i.doc] and not i.cues.question]
    dated = sorted(dated, key=lambda i: relevance[i.doc], reverse=True)[:UPDATE_WINDOW]
    matched = {
        i.doc: {term for qt in query.terms for term, _ in qt.matches if term in i.said}
        for i in dated
    }
    dated = [i for i in dated if matched[i.doc]]
    dated.sort(key=lambda i: (i.time, i.doc), reverse=True)
    weight = {term: qt.weight for qt in query.terms for term, _ in qt.matches}

    held = {doc: sum(weight[t] for t in found) for doc, found in matched.items()}

    def same_topic(older: Item, newer: Item) -> bool:
        shared = matched[older.doc] & matched[newer.doc]
        if newer.cues.change:  # a line that says it changes something needs one shared word
            return bool(shared)
        return sum(weight[t] for t in shared) >= TOPIC_SHARE * held[older.doc]

    follows = [
        (older.doc, newer.doc)
        for n, older in enumerate(dated)
        for newer in dated[:n]
        if newer.time > older.time
        and relevance[newer.doc]
        >= (CHANGE_BAND if newer.cues.change else UPDATE_BAND) * relevance[older.doc]
        and same_topic(older, newer)
    ]
    for older, newer in reversed(follows):  # oldest first, so a lift passes on to what is newer
        scores[newer] = max(scores[newer], scores[older])
    for older, newer in follows:
        scores[older] = min(scores[older], scores[newer] - 1e-6)


# ---- compaction -------------------------------------------------------------------------


def _carried(memory: Memory, req: Request) -> list[tuple[int, tuple[str, str]]]:
    """Dropped turns, densest first: numbers and names are what a summary must not lose."""
    out: list[tuple[float, int, tuple[str, str]]] = []
    for n, turn in enumerate(req.carry):
        doc = memory.by_turn.get(key_of(turn), -1 - n)
        item = memory.items[doc] if doc >= 0 else None
        bullet = _bullet(item, req) if item else turn_bullet(turn.role, turn.at, turn.text, ())
        out.append((density(turn.text), doc, (EARLIER, bullet)))
    out.sort(key=lambda entry: entry[0], reverse=True)
    return [(doc, bullet) for _, doc, bullet in out]


def density(text: str) -> float:
    words = text.split()
    if not words:
        return 0.0
    numbers = sum(any(c.isdigit() for c in w) for w in words)
    names = sum(w[:1].isupper() for w in words[1:])
    return (numbers + names) / math.sqrt(len(words))


# ---- rendering --------------------------------------------------------------------------


def _section(item: Item, req: Request) -> str:
    if item.kind in (ItemKind.learning, ItemKind.belief):
        return LEARNINGS
    if item.kind is ItemKind.document:
        return DOCUMENTS
    if req.thread is not None and item.thread == req.thread:
        return EARLIER
    return AGENT_HISTORY if item.agent == req.agent else TEAM


def _bullet(item: Item, req: Request) -> str:
    if item.kind is ItemKind.belief:
        return f"Belief: {item.text}"
    if item.kind is ItemKind.learning:
        return f"{item.text} (confidence {item.confidence:.1f})"
    if item.kind is ItemKind.document:
        return f"{item.title}: {item.text}" if item.title else item.text
    speaker = item.speaker or item.role or "turn"
    if item.speaker is None and item.agent and item.agent != req.agent:
        speaker = f"{item.agent} {speaker}"
    return turn_bullet(speaker, item.at, item.text, item.tools)


def _fit(title: str, chosen: Iterable[tuple[str, str]], budget: int) -> list[Section]:
    """Take bullets in order while they fit, counting each section heading once."""
    room = budget * CHARS_PER_TOKEN - len(f"# {title}\n")
    sections: dict[str, list[str]] = {}
    misses = 0
    for section, bullet in chosen:
        line = " ".join(bullet.split())
        cost = len(line) + 3 + (0 if section in sections else len(section) + 5)
        if not line or cost > room:
            misses += 1
            if misses > MAX_MISSES:
                break
            continue
        misses = 0
        room -= cost
        sections.setdefault(section, []).append(line)
        if room < MIN_BULLET_CHARS:
            break
    return [Section(title=name, bullets=bullets) for name, bullets in sections.items()]
