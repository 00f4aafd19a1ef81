"""Write a file in the published LongMemEval shape, at any size, for scale measurements.

    python -m benchmarks.longmemeval_gen --out /tmp/lme-s.json                     # S-like
    python -m benchmarks.longmemeval_gen --out /tmp/lme-m.json --sessions 500      # M-like
    python -m benchmarks.longmemeval_gen --out /tmp/small.json --instances 20 --sessions 4

Each instance is a haystack of seeded filler sessions with one planted fact (or, for a
knowledge update, an old value and a later new one; for an abstention question, nothing) and a
question whose answer is the planted value. Scores on this text mean nothing about memory: the
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


def instance(n: int, sessions: int, turns: int, words: int, rng: random.Random) -> dict[str, Any]:
    kind = TYPES[n % len(TYPES)]
    thing, value_of = THINGS[n % len(THINGS)]
    start = datetime(2023, 1, 1) + timedelta(days=rng.randrange(300))
    dates = [start + timedelta(days=2 * s, hours=rng.randrange(8, 20)) for s in range(sessions)]
    haystack = [
        [
            {"role": "user" if t % 2 == 0 else "assistant", "content": filler(rng, words)}
            for t in range(turns)
        ]
        for _ in range(sessions)
    ]
    ids = [f"gen_{n}_s{s}" for s in range(sessions)]
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


def write(out: Path, instances: int, sessions: int, turns: int, words: int, seed: int) -> int:
    rng = random.Random(seed)
    with out.open("w", encoding="utf-8") as handle:
        handle.write("[")
        for n in range(instances):
            handle.write(("," if n else "") + "\n")
            json.dump(instance(n, sessions, turns, words, rng), handle)
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
    args = parser.parse_args()
    size = write(args.out, args.instances, args.sessions, args.turns, args.words, args.seed)
    print(f"{args.out}: {args.instances} instances x {args.sessions} sessions x {args.turns} "
          f"turns, {size / 1e6:.1f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
