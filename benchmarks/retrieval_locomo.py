"""Evidence recall and MRR on LoCoMo per category, for the baselines and the open-source
engines at the same pack budget, with all-MiniLM-L6-v2 as every engine's embedder (its int8
tier unless an engine is given another: `dense?embedder=minilm`).

Run: `python -m benchmarks.retrieval_locomo [PATH] [--engines reference,bm25,dense,hybrid,
mem0-oss,graphiti] [--only conv-26]` (PATH defaults to the development split beside the
repository). Engines that call a model service (`mem0-oss`, `graphiti`) get `memeval models
serve` started in this process unless `--model-url` names one. Each engine is scored as
`benchmarks/locomo_recall.py` scores it (every conversation written session by session, every
question asked as a probe): each conversation's tally is printed as it finishes, then the sums
by category, the wall time and the CPU time of this process and its children. `--isolate`
(the default for graphiti) runs each conversation in a process of its own, so a native crash
loses one conversation, reported with its exit signal and run once more
(`benchmarks/locomo_runs.py`).

`--embed-only` measures the embedder alone: load time, then every turn and question of the
file embedded through the on-disk cache (run it twice: the second run embeds nothing);
`--embedder minilm` times the float32 tier instead.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from benchmarks.locomo_recall import read
from benchmarks.locomo_runs import score
from memeval import embeddings
from memeval.importers.locomo import Conversation

ENGINES = "reference,bm25,dense,hybrid,mem0-oss,graphiti"
SERVED = ("mem0-oss", "graphiti")
ISOLATED = ("graphiti",)  # Kuzu 0.11 has crashed the process inside its full-text index


def base(name: str) -> str:
    return name.split("?")[0]


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
    if base(name) not in SERVED or url is None:
        return name
    return f"{name}{'&' if '?' in name else '?'}url={url}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="?", type=Path)
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
    parser.add_argument(
        "--isolate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"each conversation in a process of its own (default: for {', '.join(ISOLATED)})",
    )
    args = parser.parse_args()
    conversations = read(args.path, args.only)
    if args.embed_only:
        embed_only(conversations, args.embedder)
        return
    names = args.engines.split(",")
    needed = any(base(n) in SERVED for n in names)
    crashed = False
    with model_service(args.model_url, needed) as url:
        for name in names:
            isolate = args.isolate if args.isolate is not None else base(name) in ISOLATED
            crashed |= bool(score(reference_of(name, url), conversations, isolate))
    if crashed:  # the sums printed leave those conversations out
        raise SystemExit(1)


if __name__ == "__main__":
    main()
