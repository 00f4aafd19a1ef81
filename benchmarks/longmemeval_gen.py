"""Write a file in the published LongMemEval shape, at any size, for scale measurements.

    python -m benchmarks.longmemeval_gen --out /tmp/lme-s.json                     # S-like
    python -m benchmarks.longmemeval_gen --out /tmp/lme-m.json --sessions 500      # M-like
    python -m benchmarks.longmemeval_gen --out /tmp/small.json --instances 20 --sessions 4
    python -m benchmarks.longmemeval_gen --out /tmp/lme-s-pool.json --pool 500   # shared pool

Each instance is a haystack of seeded filler sessions with one planted fact (or, for a
knowledge update, an old value and a later new one; for an abstention question, nothing) and a
question whose answer is the planted value.

By default every filler session is new, so no text repeats across instances. The published
files are not built that way: LongMemEval's `sample_haystack_and_timestamp.py` draws each
instance's filler sessions at random from shared pools (its simulated user sessions, and
ShareGPT and UltraChat sessions), so the same sessions recur across the 500 instances. With
`--pool N` the filler sessions are drawn the same way from one seeded pool of N sessions
(without repeats inside an instance, so N must be at least `--sessions`); the session that
carries a plant is a copy under an id of its own. A pooled file has about N x `--turns`
distinct filler texts whatever its number of instances: what an embedding cache keyed by text
sees on the published files. Scores on this text mean nothing about memory: the
filler is word salad and the plants are easy to find. It exists to measure size: import memory,
dispatch, throughput, report sizes. The file is written as it is generated, so writing an
M-sized file needs no more memory than an S-sized one.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

WORDS = (
    "river garden window lantern copper meadow ticket harbor pencil orchard ladder marble "
    "violet engine canvas thunder pepper saddle blanket compass pillow tunnel feather anchor "
    "button carpet dragon falcon glacier hammer island jacket kettle lemon magnet needle "
    "ocean parrot quilt rocket shovel tiger umbrella velvet walnut yacht zebra about after "
    "again always around because before better bring carry clean could every found gather "
    "going great happy later little maybe never often other people quick really should "
    "small something still think through today together under usually very while would"
).split()
THINGS = (
    ("locker code", lambda r: f"{r.randrange(1000, 9999)}"),
    ("dentist's name", lambda r: f"Dr. {r.choice(['Okafor', 'Lindqvist', 'Marchetti', 'Tanaka'])}"),
    ("bike colour", lambda r: r.choice(["teal", "mustard", "crimson", "olive"])),
    ("gym day", lambda r: r.choice(["Monday", "Wednesday", "Friday", "Sunday"])),
    ("wifi name", lambda r: f"{r.choice(WORDS)}-{r.randrange(10, 99)}"),
)
TYPES = ("single-session-user", "knowledge-update", "abstention")
DATE = "%Y/%m/%d (%a) %H:%M"


def filler(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def session(rng: random.Random, turns: int, words: int) -> list[dict[str, Any]]:
    return [
        {"role": "user" if t % 2 == 0 else "assistant", "content": filler(rng, words)}
        for t in range(turns)
    ]


Pool = list[tuple[str, list[dict[str, Any]]]]


def pool_of(size: int, turns: int, words: int, seed: int) -> Pool:
    """`size` filler sessions with ids of their own, from a generator of their own: the
    instances' draws do not change what the pool holds."""
    rng = random.Random(f"pool-{seed}")
    return [(f"pool_s{i}", session(rng, turns, words)) for i in range(size)]


def instance(
    n: int, sessions: int, turns: int, words: int, rng: random.Random, pool: Pool | None = None
) -> dict[str, Any]:
    kind = TYPES[n % len(TYPES)]
    thing, value_of = THINGS[n % len(THINGS)]
    start = datetime(2023, 1, 1) + timedelta(days=rng.randrange(300))
    dates = [start + timedelta(days=2 * s, hours=rng.randrange(8, 20)) for s in range(sessions)]
    if pool is None:
        haystack = [session(rng, turns, words) for _ in range(sessions)]
        ids = [f"gen_{n}_s{s}" for s in range(sessions)]
    else:
        drawn = rng.sample(pool, sessions)
        ids = [sid for sid, _ in drawn]
        haystack = [[dict(turn) for turn in turns_] for _, turns_ in drawn]
    answer_ids: list[str] = []
    answer: str = "You did not mention it."
    if kind != "abstention":
        plants = [rng.randrange(sessions)]
        if kind == "knowledge-update":
            plants = sorted(
                {
                    rng.randrange(sessions // 2 or 1),
                    sessions // 2 + rng.randrange(sessions - sessions // 2),
                }
            )
        for at in plants:
            answer = value_of(rng)
            haystack[at][0] = {
                "role": "user", "content": f"By the way, my {thing} is {answer} now.",
                "has_answer": True,
            }  # fmt: skip
            if pool is not None:  # no longer the pool's session: it holds this instance's fact
                ids[at] = f"gen_{n}_answer_{ids[at]}"
            answer_ids.append(ids[at])
    asked = dates[-1] + timedelta(days=1)
    return {
        "question_id": f"gen_{n}" + ("_abs" if kind == "abstention" else ""),
        "question_type": kind,
        "question": f"What is my {thing}?",
        "answer": answer,
        "question_date": asked.strftime(DATE),
        "haystack_session_ids": ids,
        "haystack_dates": [d.strftime(DATE) for d in dates],
        "haystack_sessions": haystack,
        "answer_session_ids": answer_ids[-1:] if kind == "knowledge-update" else answer_ids,
    }


def write(
    out: Path, instances: int, sessions: int, turns: int, words: int, seed: int, pool: int = 0
) -> int:
    rng = random.Random(seed)
    shared = pool_of(pool, turns, words, seed) if pool else None
    with out.open("w", encoding="utf-8") as handle:
        handle.write("[")
        for n in range(instances):
            handle.write(("," if n else "") + "\n")
            json.dump(instance(n, sessions, turns, words, rng, shared), handle)
        handle.write("\n]\n")
    return out.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--instances", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=48, help="48: S-like; 500: M-like")
    parser.add_argument("--turns", type=int, default=10, help="turns per session")
    parser.add_argument(
        "--words",
        type=int,
        default=180,
        help="filler words per turn (180: about 115k tokens an S instance)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--pool",
        type=int,
        default=0,
        help="draw filler sessions from one seeded pool of this many, as the published files "
        "do (0, the default: every filler session new)",
    )
    args = parser.parse_args()
    if args.pool and args.pool < args.sessions:
        parser.error(f"--pool {args.pool} is smaller than --sessions {args.sessions}: an "
                     "instance draws its sessions from the pool without repeats")  # fmt: skip
    size = write(
        args.out, args.instances, args.sessions, args.turns, args.words, args.seed, args.pool
    )
    pooled = f", filler from a pool of {args.pool} sessions" if args.pool else ""
    print(f"{args.out}: {args.instances} instances x {args.sessions} sessions x {args.turns} "
          f"turns{pooled}, {size / 1e6:.1f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
