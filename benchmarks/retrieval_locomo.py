"""Evidence recall and MRR on LoCoMo per category, for the baselines and the open-source
engines at the same pack budget, with all-MiniLM-L6-v2 as every engine's embedder (its int8
tier unless an engine is given another: `dense?embedder=minilm`).

Run: `python -m benchmarks.retrieval_locomo [PATH] [--engines reference,bm25,dense,hybrid,
mem0-oss,graphiti] [--only conv-26]` (PATH defaults to the development split beside the
repository). Engines that call a model service (`mem0-oss`, `graphiti`) get `memeval models
serve` started in this process unless `--model-url` names one. Each engine is scored as
`benchmarks/locomo_recall.py` scores it (every conversation written session by session, every
question asked as a probe), and its wall time and this process's CPU time are printed.

`--embed-only` measures the embedder alone: load time, then every turn and question of the
file embedded through the on-disk cache (run it twice: the second run embeds nothing);
`--embedder minilm` times the float32 tier instead.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from benchmarks.locomo_recall import DEFAULT, Tally, measure
from memeval import embeddings
from memeval.engines.registry import create, models_of
from memeval.importers import locomo
from memeval.importers.locomo import Category, Conversation
from memeval.importers.pinning import check_pins

ENGINES = "reference,bm25,dense,hybrid,mem0-oss,graphiti"
SERVED = ("mem0-oss", "graphiti")


def texts_of(conversations: list[Conversation]) -> list[str]:
    turns = [t.text for c in conversations for s in c.sessions for t in s.turns]
    return turns + [q.question for c in conversations for q in c.questions]


def embed_only(conversations: list[Conversation], embedder: str) -> None:
    texts = texts_of(conversations)
    wall, cpu = time.perf_counter(), time.process_time()
    model = embeddings.load(embedder)
    print(f"load: {time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s CPU")
    wall, cpu = time.perf_counter(), time.process_time()
    model.embed(texts)
    computed = getattr(model, "computed", len(texts))
    print(
        f"embed {len(texts)} texts ({computed} computed, the rest from the cache): "
        f"{time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s CPU"
    )


@contextlib.contextmanager
def model_service(url: str | None, needed: bool) -> Iterator[str | None]:
    if url or not needed:
        yield url
        return
    from memeval.models.server import running

    with running() as served:
        yield served


def reference_of(name: str, url: str | None) -> str:
    if name.split("?")[0] not in SERVED or url is None:
        return name
    return f"{name}{'&' if '?' in name else '?'}url={url}"


async def score(name: str, conversations: list[Conversation]) -> None:
    engine = create(name)
    tallies: dict[str, Tally] = defaultdict(Tally)
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        for conv in conversations:
            await measure(engine, conv, tallies)
    finally:
        await engine.close()
    print(f"== {name.split('?url=')[0].split('&url=')[0]}")
    for model in models_of(name):
        print(f"  {model}")
    for key in ["overall", *(c.tag for c in Category)]:
        if key in tallies:
            print("  " + tallies[key].line(key))
    print(f"  wall {time.perf_counter() - wall:.1f} s, CPU {time.process_time() - cpu:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--engines", default=ENGINES)
    parser.add_argument("--only", default="", help="comma-separated sample ids")
    parser.add_argument("--model-url", default=None, help="a running `memeval models serve`")
    parser.add_argument("--embed-only", action="store_true")
    parser.add_argument(
        "--embedder",
        default=embeddings.DEFAULT,
        choices=embeddings.NAMES,
        help="with --embed-only: the embedder to time",
    )
    args = parser.parse_args()
    warning = check_pins(args.path, locomo.PINS)
    if warning:
        print(f"warning: {warning}")
    conversations = locomo.read(args.path)
    if args.only:
        keep = set(args.only.split(","))
        conversations = [c for c in conversations if c.id in keep]
    if args.embed_only:
        embed_only(conversations, args.embedder)
        return
    names = args.engines.split(",")
    needed = any(n.split("?")[0] in SERVED for n in names)
    with model_service(args.model_url, needed) as url:
        for name in names:
            asyncio.run(score(reference_of(name, url), conversations))


if __name__ == "__main__":
    main()
