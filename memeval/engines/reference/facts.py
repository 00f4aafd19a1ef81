"""The bitemporal fact store: what was asserted, and what of it holds at a given moment.

Assertions are never rewritten. Supersession, retraction, expiry and exclusive slots are read at
query time through a `View` pinned to one moment, so `query` (now) and `query_at` (any time)
share one code path and a point-in-time answer never depends on what was stored afterwards.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from memeval.engines.reference.cues import read_cues
from memeval.engines.reference.index import LexicalIndex
from memeval.engines.reference.spans import span
from memeval.engines.reference.text import bigrams, normalise, predicate_words, terms
from memeval.suites.fixture import Assertion

Slot = tuple[str, str]  # (normalised subject, normalised predicate)
Triple = tuple[str, str, str]
EPOCH = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True, eq=False)  # one object per stored version: identity is equality
class Fact:
    assertion: Assertion
    seq: int  # store order: the last tie-break for "newer"
    terms: frozenset[str]
    slot: Slot | None  # (subject, predicate), normalised
    triple: Triple | None
    change: bool  # worded as a change ("switched to", "no longer"): it replaces what it names
    pairs: frozenset[tuple[str, str]]  # adjacent terms, for phrase matches

    @classmethod
    def of(cls, assertion: Assertion, seq: int, words: list[str]) -> Fact:
        a = assertion
        slot = None
        if a.subject is not None and a.predicate is not None:
            slot = normalise(a.subject), normalise(predicate_words(a.predicate))
        triple = (*slot, normalise(a.object)) if slot and a.object is not None else None
        change = read_cues(a.text).change
        pairs = bigrams(a.text) | (bigrams(span(a).text) if a.excerpt else set())
        return cls(a, seq, frozenset(words), slot, triple, change, frozenset(pairs))

    @property
    def id(self) -> str:
        return self.assertion.id

    @property
    def recency(self) -> tuple[datetime, datetime]:
        """When it became true, then when it was learnt: later wins among rival values."""
        a = self.assertion
        return a.valid_from or EPOCH, a.recorded_at or EPOCH

    @property
    def newness(self) -> tuple[datetime, datetime, int]:
        """Recency with store order last, for ordering equal scores newest first."""
        return (*self.recency, self.seq)

    @property
    def resolution_key(self) -> tuple[int, tuple[datetime, datetime], float]:
        """How a conflict is settled: trust, then recency, then confidence."""
        a = self.assertion
        return a.trust.rank, self.recency, a.confidence


def index_terms(a: Assertion) -> list[str]:
    """The text's terms plus those of its triple and of its source passage (see `spans`) it
    does not already use, so a predicate's words, or the source's, are searchable even when
    the text words it differently, without counting twice."""
    own = terms(a.text)
    seen = set(own)
    triple = " ".join([a.subject or "", predicate_words(a.predicate or ""), a.object or ""])
    passage = span(a).text if a.excerpt else ""
    return own + [t for t in dict.fromkeys(terms(f"{triple} {passage}")) if t not in seen]


@dataclass
class FactStore:
    index: LexicalIndex = field(default_factory=LexicalIndex)
    facts: dict[str, Fact] = field(default_factory=dict)
    by_doc: dict[int, str] = field(default_factory=dict)
    slots: dict[Slot, list[str]] = field(default_factory=lambda: defaultdict(list))
    superseded_by: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    retracted_by: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    challenged_by: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    same_triple: dict[Triple, list[str]] = field(default_factory=lambda: defaultdict(list))
    same_text: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _seq: int = 0

    def add(self, a: Assertion) -> Fact:
        """Store an assertion; storing an id again replaces the earlier version of it."""
        old = self.facts.get(a.id)
        if old is not None:
            self._unlink(old)
        self._seq += 1
        words = index_terms(a)
        fact = Fact.of(a, self._seq, words)
        self.facts[a.id] = fact
        self.by_doc[fact.seq] = a.id
        self.index.add(fact.seq, words)
        self._link(fact)
        return fact

    def fact_for_doc(self, doc: int) -> Fact | None:
        fid = self.by_doc.get(doc)
        return self.facts.get(fid) if fid is not None else None

    def _link(self, fact: Fact) -> None:
        a = fact.assertion
        if fact.slot is not None:
            self.slots[fact.slot].append(a.id)
        if fact.triple is not None:
            self.same_triple[fact.triple].append(a.id)
        self.same_text[normalise(a.text)].append(a.id)
        for target, links in (
            (a.supersedes, self.superseded_by),
            (a.retracts, self.retracted_by),
            (a.challenges, self.challenged_by),
        ):
            if target is not None:
                links[target].append(a.id)

    def _unlink(self, fact: Fact) -> None:
        del self.by_doc[fact.seq]
        a = fact.assertion
        lists: list[list[str]] = [self.same_text[normalise(a.text)]]
        if fact.slot is not None:
            lists.append(self.slots[fact.slot])
        if fact.triple is not None:
            lists.append(self.same_triple[fact.triple])
        for target, links in (
            (a.supersedes, self.superseded_by),
            (a.retracts, self.retracted_by),
            (a.challenges, self.challenged_by),
        ):
            if target is not None:
                lists.append(links[target])
        for ids in lists:
            ids.remove(a.id)


class Status(StrEnum):
    current = "current"
    unrecorded = "unrecorded"  # recorded after the view's moment: it does not exist yet
    future = "future"  # valid only from a later time
    expired = "expired"  # valid_to has passed
    retraction = "retraction"  # withdraws another assertion; never an answer itself
    retracted = "retracted"
    superseded = "superseded"
    succeeded = "succeeded"  # a value in its slot that became valid later took over
    lost = "lost"  # lost a conflict (exclusive slot, same slot, or a challenge)

    @property
    def replaceable(self) -> bool:
        """A newer or better fact answers in its place, so its relevance passes on."""
        return self in (Status.superseded, Status.succeeded, Status.lost, Status.expired)


@dataclass(frozen=True)
class Conflict:
    ids: tuple[str, ...]
    resolved_to: str | None
    reason: str


@dataclass(frozen=True)
class SlotState:
    holders: tuple[str, ...]  # facts whose value the slot holds now (rivals included)
    succeeded: frozenset[str]  # facts whose value a later-starting one replaced
    conflict: Conflict | None


class View:
    """The store as it stands at one moment, in valid time and record time at once."""

    def __init__(self, store: FactStore, at: datetime) -> None:
        self.store = store
        self.at = at
        self._status: dict[str, Status] = {}
        self._base: dict[str, Status] = {}
        self._slots: dict[Slot, SlotState] = {}

    # ---- single facts -------------------------------------------------------------------

    def known(self, fact: Fact) -> bool:
        recorded = fact.assertion.recorded_at
        return recorded is None or recorded <= self.at

    def started(self, fact: Fact) -> bool:
        start = fact.assertion.valid_from
        return start is None or start <= self.at

    def valid(self, fact: Fact) -> bool:
        end = fact.assertion.valid_to
        return self.started(fact) and (end is None or self.at < end)

    def takes_effect(self, fid: str) -> bool:
        """A correction or withdrawal counts once it is known and its validity has begun."""
        fact = self.store.facts.get(fid)
        return fact is not None and self.known(fact) and self.started(fact)

    def status(self, fid: str) -> Status:
        cached = self._status.get(fid)
        if cached is None:
            cached = self._status[fid] = self._compute_status(fid)
        return cached

    def _base_status(self, fact: Fact) -> Status:
        """Everything but conflicts, which need the base status of the rival facts."""
        cached = self._base.get(fact.id)
        if cached is None:
            cached = self._base[fact.id] = self._compute_base_status(fact)
        return cached

    def _compute_base_status(self, fact: Fact) -> Status:
        a = fact.assertion
        if not self.known(fact):
            return Status.unrecorded
        if a.retracts is not None:
            return Status.retraction
        if any(self.takes_effect(r) for r in self.store.retracted_by.get(a.id, ())):
            return Status.retracted
        if any(self.takes_effect(s) for s in self.store.superseded_by.get(a.id, ())):
            return Status.superseded
        if not self.started(fact):
            return Status.future
        if not self.valid(fact):
            return Status.expired
        return Status.current

    def _compute_status(self, fid: str) -> Status:
        fact = self.store.facts[fid]
        base = self._base_status(fact)
        if base is not Status.current:
            return base
        if fact.slot is not None and fid in self.slot(fact.slot).succeeded:
            return Status.succeeded
        for conflict in self.conflicts_of(fid):
            if conflict.resolved_to is not None and conflict.resolved_to != fid:
                winner = self.store.facts[conflict.resolved_to]
                if fact.triple is None or fact.triple != winner.triple:
                    return Status.lost
        return Status.current

    def alive(self, fid: str) -> bool:
        """Holds at this moment unless a rival beats it: the facts that can be in conflict."""
        fact = self.store.facts.get(fid)
        return fact is not None and self._base_status(fact) is Status.current

    # ---- conflicts ----------------------------------------------------------------------

    def conflicts_of(self, fid: str) -> list[Conflict]:
        fact = self.store.facts.get(fid)
        if fact is None:
            return []
        out: list[Conflict] = []
        if fact.slot is not None:
            conflict = self.slot(fact.slot).conflict
            if conflict is not None and fid in conflict.ids:
                out.append(conflict)
        out.extend(self._challenges(fact))
        return out

    def slot(self, slot: Slot) -> SlotState:
        state = self._slots.get(slot)
        if state is None:
            state = self._slots[slot] = self._compute_slot(slot)
        return state

    def _compute_slot(self, slot: Slot) -> SlotState:
        """Who holds a (subject, predicate) slot at this moment, and whether rivals clash.

        Values with different `valid_from` follow one another in time: the latest to start
        holds the slot and the earlier ones are *succeeded*, which is history, not conflict;
        except, in a slot that is not exclusive, an earlier value that states its own end:
        it holds until then, alongside the newer one (two memberships, each valid for its
        own years). Values that claim the same period (same start, or no start given) are
        rivals. In an exclusive slot rivals always clash. Otherwise they clash unless one
        source stated them all at once: that reads as a list (Bob manages Carol and Dan), not
        a dispute.
        """
        facts = self.store.facts
        alive = [facts[i] for i in self.store.slots.get(slot, ()) if self.alive(i)]
        starts = [f.assertion.valid_from for f in alive if f.assertion.valid_from is not None]
        latest = max(starts, default=None)
        rivals = [f for f in alive if f.assertion.valid_from in (None, latest)]
        held = {r.triple for r in rivals}
        exclusive = any(f.assertion.exclusive for f in alive)
        succeeded = frozenset(
            f.id
            for f in alive
            if f.triple not in held and (exclusive or f.assertion.valid_to is None)
        )
        holders = tuple(f.id for f in alive if f.id not in succeeded)
        return SlotState(holders, succeeded, _clash(rivals))

    def _challenges(self, fact: Fact) -> list[Conflict]:
        pairs = [(fact.assertion.challenges, fact.id)] if fact.assertion.challenges else []
        pairs += [(fact.id, c) for c in self.store.challenged_by.get(fact.id, ())]
        out: list[Conflict] = []
        for target, challenger in pairs:
            if target is None or not (self.alive(target) and self.alive(challenger)):
                continue
            t, c = self.store.facts[target], self.store.facts[challenger]
            if t.resolution_key == c.resolution_key:
                out.append(Conflict((target, challenger), None, "challenged; the two tie"))
            else:
                winner, loser = (t, c) if t.resolution_key > c.resolution_key else (c, t)
                reason = f"`{challenger}` challenges `{target}`: {_why(winner, loser)}"
                out.append(Conflict((target, challenger), winner.id, reason))
        return out

    def unresolved(self, fid: str) -> list[Conflict]:
        return [c for c in self.conflicts_of(fid) if c.resolved_to is None]

    # ---- what answers in a fact's place -------------------------------------------------

    def successors(self, fid: str, depth: int = 0) -> list[str]:
        """The current facts that answer for one that no longer holds (or lost a conflict)."""
        status = self.status(fid)
        if status is Status.current:
            return [fid]
        if not status.replaceable or depth > 8:
            return []
        fact = self.store.facts[fid]
        if status is Status.superseded:
            nxt = [s for s in self.store.superseded_by.get(fid, ()) if self.takes_effect(s)]
        elif status is Status.lost:
            nxt = [c.resolved_to for c in self.conflicts_of(fid) if c.resolved_to]
        elif status is Status.succeeded and fact.slot is not None:
            nxt = list(self.slot(fact.slot).holders)
        else:  # expired: whatever holds the same slot now, if anything does
            slot = fact.slot
            held = self.store.slots.get(slot, ()) if slot else ()
            nxt = [i for i in held if i != fid and self.status(i) is Status.current]
        out: list[str] = []
        for nid in nxt:
            for s in self.successors(nid, depth + 1):
                if s not in out:
                    out.append(s)
        return out


def _clash(rivals: list[Fact]) -> Conflict | None:
    values = {f.triple for f in rivals}
    if len(values) < 2:
        return None
    exclusive = any(f.assertion.exclusive for f in rivals)
    statements = {(f.assertion.source, f.recency) for f in rivals}
    if not exclusive and len(statements) == 1:
        return None
    ranked = sorted(rivals, key=lambda f: (f.resolution_key, f.seq), reverse=True)
    best = ranked[0]
    runner_up = next(f for f in ranked if f.triple != best.triple)
    kind = "exclusive slot" if exclusive else "one slot"
    ids = tuple(f.id for f in sorted(rivals, key=lambda f: f.seq))
    if best.resolution_key == runner_up.resolution_key:
        return Conflict(ids, None, f"{kind}, rival values tie on trust, recency, confidence")
    return Conflict(ids, best.id, f"{kind}: {_why(best, runner_up)}")


def _why(winner: Fact, loser: Fact) -> str:
    w, lo = winner.assertion, loser.assertion
    if w.trust != lo.trust:
        return f"`{w.id}` wins on trust ({w.trust} over {lo.trust})"
    if winner.recency != loser.recency:
        return f"`{w.id}` wins as the more recent"
    return f"`{w.id}` wins on confidence ({w.confidence} over {lo.confidence})"
