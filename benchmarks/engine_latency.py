"""Latency of the reference engine's hot calls at 1k, 10k and 100k stored items per tenant.

Run: `python benchmarks/engine_latency.py [sizes...]`. Prints p50/p95 (ms) of `query` over a
tenant of N assertions and of `pre_turn` over a tenant of N turns and documents.
`python benchmarks/engine_latency.py --conversation [TURNS] [ENGINE...]` writes one conversation
between two people (28 sessions, TURNS turns in all, 700 by default, LoCoMo's size) through
`write_history`, then asks 300 questions without logging them: it prints the whole write, the
write cost per turn of the first and the last sessions (flat when ingest does not grow with
what is stored), and the query p50 / p95. The data is
synthetic (Zipf-distributed made-up words, a few thousand entity names, triples linking them)
and seeded, so runs are comparable; questions mix stored wording with words never stored.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from itertools import accumulate

from memeval.engines.base import Engine
from memeval.engines.reference import ReferenceEngine
from memeval.engines.registry import create
from memeval.engines.types import MemoryItem, Turn, TurnContext
from memeval.suites.fixture import Assertion

SIZES = (1_000, 10_000, 100_000)
SAMPLES = 300
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
PREDICATES = ["reports_to", "member_of", "located_in", "owns", "depends_on", "uses", "budget"]
START = datetime(2025, 1, 1, tzinfo=UTC)


def vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))))
    return sorted(words)


class Corpus:
    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng, 20_000)
        self.cumulative = list(accumulate(1 / (rank + 1) for rank in range(len(self.words))))
        firsts, lasts = self.words[::7], self.words[3::7]
        self.names = [f"{w.title()} {v.title()}" for w, v in zip(firsts, lasts, strict=False)]

    def phrase(self, n: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=n))  # Zipf

    def assertion(self, i: int) -> Assertion:
        subject, obj = self.rng.sample(self.names[:3000], 2)
        predicate = self.rng.choice(PREDICATES)
        when = START + timedelta(minutes=i)
        return Assertion(
            id=f"a{i}",
            text=f"{subject} {predicate.replace('_', ' ')} {obj}, {self.phrase(8)}.",
            subject=subject,
            predicate=predicate,
            object=obj,
            source=f"source-{i % 17}",
            confidence=round(self.rng.uniform(0.4, 1.0), 2),
            exclusive=predicate == "reports_to",
            valid_from=when,
            recorded_at=when,
        )

    def question(self, stored: list[str]) -> str:
        if self.rng.random() < 0.2:
            return f"What about {self.phrase(3)}?"  # mostly words never asked together
        words = self.rng.choice(stored).rstrip(".").split()
        picked = self.rng.sample(words, min(4, len(words)))
        return f"What does {' '.join(picked)} say?"


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return statistics.median(ordered), p95


async def bench_query(size: int) -> tuple[float, float]:
    corpus = Corpus()
    engine = ReferenceEngine()
    texts = []
    for i in range(size):
        a = corpus.assertion(i)
        texts.append(a.text)
        await engine.store("bench", a)
    timings = []
    for _ in range(SAMPLES):
        question = corpus.question(texts)
        began = time.perf_counter()
        await engine.query("bench", question)
        timings.append((time.perf_counter() - began) * 1000)
    return percentiles(timings)


async def bench_pre_turn(size: int) -> tuple[float, float]:
    corpus = Corpus()
    engine = ReferenceEngine()
    texts = []
    documents = size // 10
    for i in range(documents):
        text = f"{corpus.phrase(12)}. {corpus.phrase(10)}."
        texts.append(text)
        await engine.ingest("bench", MemoryItem(id=f"d{i}", title=corpus.phrase(2), text=text))
    for i in range(size - documents):
        text = f"{corpus.rng.choice(corpus.names)} {corpus.phrase(10)}."
        texts.append(text)
        role = "user" if i % 2 == 0 else "assistant"
        turn = Turn(role=role, text=text, at=START + timedelta(minutes=i))
        await engine.post_turn("bench", f"agent-{i % 3}", f"thread-{i // 20}", turn)
    timings = []
    at = START + timedelta(minutes=size)
    history: list[Turn] = []
    for n in range(SAMPLES):
        turn = Turn(role="user", text=corpus.question(texts), at=at + timedelta(minutes=n))
        ctx = TurnContext(agent="agent-0", thread="live", turn=turn, in_prompt=history[-8:])
        began = time.perf_counter()
        await engine.pre_turn("bench", ctx)
        timings.append((time.perf_counter() - began) * 1000)
        history.append(turn)
    return percentiles(timings)


SESSIONS = 28


async def bench_conversation(engine: Engine, turns: int) -> None:
    corpus = Corpus()
    speakers = ("Ines", "Tobiah")
    per_session = max(1, turns // SESSIONS)
    texts: list[str] = []
    session_costs: list[float] = []  # ms per turn, session by session
    began = time.perf_counter()
    for s in range(SESSIONS):
        start = START + timedelta(days=7 * s)
        batch = []
        for i in range(per_session):
            n = s * per_session + i
            name = corpus.rng.choice(corpus.names[:40])
            text = f"I met {name} about {corpus.phrase(6)}! {corpus.phrase(8)}."
            texts.append(text)
            batch.append(
                Turn(
                    role="user",
                    speaker=speakers[n % 2],
                    text=text,
                    id=f"D{s + 1}-{i + 1}",
                    at=start + timedelta(minutes=i),
                )
            )
        t0 = time.perf_counter()
        await engine.write_history("bench", "assistant", f"session-{s + 1}", batch)
        session_costs.append((time.perf_counter() - t0) * 1000 / len(batch))
    wrote = time.perf_counter() - began
    at = START + timedelta(days=7 * SESSIONS)
    timings: list[float] = []
    cpu: list[float] = []
    for n in range(SAMPLES):
        turn = Turn(role="user", text=corpus.question(texts), at=at + timedelta(minutes=n))
        ctx = TurnContext(agent="assistant", thread=f"q{n}", turn=turn, log=False)
        t0, c0 = time.perf_counter(), time.process_time()
        await engine.pre_turn("bench", ctx)
        timings.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    p50, p95 = percentiles(timings)
    first, last = statistics.fmean(session_costs[:4]), statistics.fmean(session_costs[-4:])
    print(
        f"{engine.name:<10} {len(texts):>5} turns  write {wrote:6.2f} s  "
        f"per turn first/last sessions {first:5.2f} / {last:5.2f} ms  "
        f"query p50 {p50:6.2f} ms  p95 {p95:6.2f} ms (CPU p50 {statistics.median(cpu):6.2f} ms)",
        flush=True,
    )


async def main(sizes: tuple[int, ...]) -> None:
    print(f"{'items':>8}  {'call':<9} {'p50 ms':>8} {'p95 ms':>8}")
    for size in sizes:
        for name, bench in (("query", bench_query), ("pre_turn", bench_pre_turn)):
            p50, p95 = await bench(size)
            print(f"{size:>8}  {name:<9} {p50:>8.2f} {p95:>8.2f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--conversation"]:
        rest = sys.argv[2:]
        size = int(rest.pop(0)) if rest and rest[0].isdigit() else 700
        for name in rest or ["reference", "bm25", "naive"]:
            asyncio.run(bench_conversation(create(name), size))
    else:
        chosen = tuple(int(a) for a in sys.argv[1:]) or SIZES
        asyncio.run(main(chosen))
