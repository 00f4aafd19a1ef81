"""The entity graph: subjects and objects of stored triples as nodes, assertions as edges.

Names are matched in questions as whole token sequences (stemmed, so "offices" still finds
"office"), longest first, so "Bob Smith" wins over a node called "Bob". A single token also names
a node when exactly one node contains it ("Platform" for "Platform team"); a token shared by
several names ("team") names none of them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from memeval.engines.reference.facts import Fact
from memeval.engines.reference.text import STOPWORDS, normalise, stem, tokens

_DETERMINERS = frozenset({"the", "a", "an"})
MAX_EDGES = 256  # edges a multi-hop search may look at; keeps dense graphs cheap


@dataclass(frozen=True)
class Mention:
    node: str
    start: int  # token positions in the question, end exclusive
    end: int
    full: bool  # the whole name was written, not one distinctive token of it


@dataclass(frozen=True)
class Path:
    """Edges (fact ids) leading away from a start node, in order."""

    edges: tuple[str, ...]


def name_key(name: str) -> tuple[str, ...]:
    words = tokens(name)
    while words and words[0] in _DETERMINERS:
        words = words[1:]
    return tuple(stem(w) for w in words)


@dataclass
class Graph:
    out_edges: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    in_edges: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    display: dict[str, str] = field(default_factory=dict)
    _names: dict[tuple[str, ...], str] = field(default_factory=dict)
    _by_first: dict[str, list[tuple[str, ...]]] = field(default_factory=lambda: defaultdict(list))
    _by_token: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def add(self, fact: Fact) -> None:
        a = fact.assertion
        if a.subject is None or a.object is None:
            return
        subject, obj = self._node(a.subject), self._node(a.object)
        if fact.id not in self.out_edges[subject]:
            self.out_edges[subject].append(fact.id)
        if fact.id not in self.in_edges[obj]:
            self.in_edges[obj].append(fact.id)

    def _node(self, name: str) -> str:
        node = normalise(name)
        if node in self.display:
            return node
        self.display[node] = name.strip()
        key = name_key(name)
        if key and key not in self._names:
            self._names[key] = node
            self._by_first[key[0]].append(key)
            self._by_first[key[0]].sort(key=len, reverse=True)
            for word in key:
                if word not in STOPWORDS and len(word) >= 3:
                    self._by_token[word].add(node)
        return node

    def mentions(self, question: str) -> list[Mention]:
        words = [stem(w) for w in tokens(question)]
        out: list[Mention] = []
        taken: set[int] = set()
        i = 0
        while i < len(words):
            match = next(
                (k for k in self._by_first.get(words[i], ()) if tuple(words[i : i + len(k)]) == k),
                None,
            )
            if match is None:
                i += 1
                continue
            out.append(Mention(self._names[match], i, i + len(match), True))
            taken.update(range(i, i + len(match)))
            i += len(match)
        named = {m.node for m in out}
        for i, word in enumerate(words):
            holders = self._by_token.get(word)
            if i in taken or not holders or len(holders) != 1:
                continue
            (node,) = holders
            if node not in named:
                out.append(Mention(node, i, i + 1, False))
                named.add(node)
        return out

    def node_of(self, name: str) -> str:
        return normalise(name)

    def walk(
        self,
        start: str,
        max_edges: int,
        usable: Callable[[str], bool],
        facts: dict[str, Fact],
    ) -> Iterator[Path]:
        """Every forward path of 1..max_edges edges from `start`, each node expanded once.

        The visited set is what makes cycles harmless: a path may end on a node already seen
        (that edge is still a fact worth reporting) but never continues through it.
        """
        frontier: list[tuple[str, tuple[str, ...]]] = [(start, ())]
        visited = {start}
        budget = MAX_EDGES
        for _ in range(max_edges):
            nxt: list[tuple[str, tuple[str, ...]]] = []
            for node, path in frontier:
                for fid in self.out_edges.get(node, ()):
                    budget -= 1
                    if budget < 0:
                        return
                    fact = facts.get(fid)
                    if fact is None or not usable(fid) or fact.assertion.object is None:
                        continue
                    if self.node_of(fact.assertion.subject or "") != node:
                        continue  # the id was re-stored with another subject
                    edges = (*path, fid)
                    yield Path(edges)
                    target = self.node_of(fact.assertion.object)
                    if target not in visited:
                        visited.add(target)
                        nxt.append((target, edges))
            frontier = nxt
