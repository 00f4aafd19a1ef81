"""Evidence recall of engines on LoCoMo, straight through the engine API (no farm, no store).

Run: `python benchmarks/locomo_recall.py [PATH] [--engines reference,bm25,naive] [--only conv-26]`
(PATH defaults to ../shared/benchmarks/locomo/locomo-dev5.json). Each conversation goes to a
fresh tenant, session by session at its recorded date, through the bulk history path; then
every question is asked the way the lifecycle runner asks a probe (`pre_turn` on a new thread,
a day after the last session) and its pack is read for:

- evidence recall: the share of the question's evidence turns whose text is in the pack;
- evidence MRR: 1 / the position of the first pack unit holding an evidence turn;
- containment and token F1 of the extractive answer (the unit sharing most words with the
  question), for questions that have an answer (not the adversarial category).

It prints each engine's figures by category, with the write time per conversation and the
p50 / p95 of the query as CPU time of this process (a shared machine's wall clock measures
its neighbours), so a change to an engine can be judged in seconds, before a full run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import NoReturn

from memeval.engines.base import Engine
from memeval.engines.registry import create
from memeval.engines.types import Turn, TurnContext
from memeval.errors import MemevalError
from memeval.importers import locomo
from memeval.importers.locomo import Category, Conversation
from memeval.importers.pinning import check_pins
from memeval.scoring.pack import contains, extractive_answer, token_f1, units

# beside the main checkout: a git worktree's lands where there is none, hence `read`'s message
DEFAULT = Path(__file__).resolve().parents[2] / "shared/benchmarks/locomo/locomo-dev5.json"
FIX = "give the path of locomo-dev5.json or locomo10.json as the first argument"


def usage_error(message: str, fix: str) -> NoReturn:
    print(f"error: {message}; fix: {fix}", file=sys.stderr)
    raise SystemExit(2)


def read(given: Path | None, only: str) -> list[Conversation]:
    """The conversations of the file given, else of DEFAULT (those `only` names, if given); a
    file that cannot be read ends the run with one line naming it and the fix."""
    path = given or DEFAULT
    if given is None and not path.exists():
        usage_error(f"no LoCoMo file given and the default {path} does not exist", FIX)
    try:
        warning = check_pins(path, locomo.PINS)
        conversations = locomo.read(path)
    except OSError as exc:
        usage_error(f"cannot read the LoCoMo file {path}: {exc.strerror}", FIX)
    except MemevalError as exc:
        usage_error(f"{path}: {exc.message}", exc.fix or FIX)
    if warning:
        print(f"warning: {warning}")
    if only:
        keep = set(only.split(","))
        if unknown := keep - {c.id for c in conversations}:
            usage_error(f"{path} has no {', '.join(sorted(unknown))}", "name its sample ids")
        conversations = [c for c in conversations if c.id in keep]
    return conversations


ORDER = ["overall", *(c.tag for c in Category)]


def print_tallies(tallies: Mapping[str, Tally]) -> None:
    """Overall first, then each category the conversations held."""
    for key in ORDER:
        if key in tallies:
            print("  " + tallies[key].line(key))


class Tally:
    def __init__(self) -> None:
        self.recall: list[float] = []
        self.mrr: list[float] = []
        self.contained: list[float] = []
        self.f1: list[float] = []

    def merge(self, other: Tally) -> None:
        self.recall += other.recall
        self.mrr += other.mrr
        self.contained += other.contained
        self.f1 += other.f1

    def line(self, name: str) -> str:
        def mean(xs: list[float]) -> str:
            return f"{100 * statistics.fmean(xs):5.1f}" if xs else "    -"

        return (
            f"{name:<12} n={len(self.recall):4d}  recall {mean(self.recall)}  "
            f"mrr {statistics.fmean(self.mrr) if self.mrr else 0:.3f}  "
            f"contain {mean(self.contained)}  f1 {mean(self.f1)}"
        )


async def write_conversation(engine: Engine, tenant: str, conv: Conversation) -> None:
    """Each session one thread at its date, written in one bulk call, turns a minute apart."""
    for session in conv.sessions:
        turns = [
            Turn(
                role="user",
                speaker=turn.speaker,
                text=turn.text,
                id=turn.id,
                at=session.at + timedelta(minutes=i),
            )
            for i, turn in enumerate(session.turns)
        ]
        await engine.write_history(tenant, "assistant", f"session-{session.number}", turns)


def probe_time(conv: Conversation) -> datetime:
    return max(s.at for s in conv.sessions) + timedelta(days=1)


def normal(text: str) -> str:
    return " ".join(text.split()).casefold()


async def measure(
    engine: Engine, conv: Conversation, tallies: dict[str, Tally]
) -> tuple[float, list[float]]:
    tenant = f"bench-{conv.id}"
    started = time.process_time()
    await write_conversation(engine, tenant, conv)
    wrote = time.process_time() - started
    at = probe_time(conv)
    latencies: list[float] = []
    for n, qa in enumerate(conv.questions):
        if not qa.evidence:
            continue
        asked = Turn(role="user", text=qa.question, at=at)
        ctx = TurnContext(agent="assistant", thread=f"probe-{n}", turn=asked, log=False)
        began = time.process_time()
        pack = await engine.pre_turn(tenant, ctx)
        latencies.append(time.process_time() - began)
        lines = [normal(u) for u in units(pack.markdown)]
        if pack.unit_ids is not None:  # the engine says which writes each unit came from
            held = [set(ids) for ids in pack.unit_ids]
        else:  # traced by text
            texts = {e: normal(t.text) for e in qa.evidence if (t := conv.turn(e)) is not None}
            held = [{e for e, text in texts.items() if text in line} for line in lines]
        found = [any(e in ids for ids in held) for e in qa.evidence]
        first = next((i for i, ids in enumerate(held, 1) if ids & set(qa.evidence)), None)
        answer = extractive_answer(units(pack.markdown), qa.question)
        for tally in (tallies[qa.category.tag], tallies["overall"]):
            tally.recall.append(sum(found) / len(found))
            tally.mrr.append(1 / first if first else 0.0)
            if qa.answer is not None:
                tally.contained.append(float(contains(answer, qa.answer)))
                tally.f1.append(token_f1(answer, [qa.answer]))
    await engine.forget(tenant)
    return wrote, latencies


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument("--engines", default="reference,bm25,naive")
    parser.add_argument("--only", default="", help="comma-separated sample ids")
    args = parser.parse_args()
    conversations = read(args.path, args.only)
    for name in args.engines.split(","):
        engine = create(name)
        tallies: dict[str, Tally] = defaultdict(Tally)
        writes: list[float] = []
        latencies: list[float] = []
        for conv in conversations:
            wrote, lat = await measure(engine, conv, tallies)
            writes.append(wrote)
            latencies.extend(lat)
        print(f"== {name}")
        print_tallies(tallies)
        q = statistics.quantiles(latencies, n=20)
        print(
            f"  CPU: write per conversation mean {statistics.fmean(writes):.2f} s, "
            f"max {max(writes):.2f} s; query p50 {1000 * statistics.median(latencies):.1f} ms, "
            f"p95 {1000 * q[18]:.1f} ms"
        )


if __name__ == "__main__":
    asyncio.run(main())
