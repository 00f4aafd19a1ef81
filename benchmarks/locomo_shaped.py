"""Conversations in LoCoMo's published shape, generated, for farm measurements at any count.

LoCoMo's development split holds five conversations; a farm measured at 64 or 128 concurrent
cases needs more cases than that, and the split's terms allow it to be used for developing the
importer, not copied or multiplied. So the farm benchmarks write their own file in the same
shape (`sample_id`, `conversation` with `speaker_a`, `speaker_b`, `session_N` turn lists and
`session_N_date_time`, `qa` with `evidence` and `category`) and read it through `locomo:PATH`,
the importer a real copy goes through. Every conversation has the same number of sessions,
turns and questions, so every case makes the same number of engine calls. The words are made
up: scores on this text mean nothing.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

NAMES = ["Ama", "Bodil", "Chidi", "Dara", "Eino", "Farah", "Goran", "Hana", "Ilse", "Jomo"]
THINGS = ["kayak", "violin", "garden", "bakery", "telescope", "novel", "marathon", "pottery"]
PLACES = ["Lisbon", "Oaxaca", "Tromso", "Hanoi", "Kigali", "Perth", "Quito", "Tartu"]
START = datetime(2023, 5, 8, 13, 56)


def conversation(n: int, *, sessions: int, turns: int, questions: int) -> dict[str, Any]:
    """Sample `n`: two people talk over `sessions` sessions of `turns` turns; each question
    asks after one thing a turn said, and names that turn as its evidence."""
    rng = random.Random(n)
    a, b = rng.sample(NAMES, 2)
    talk: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    said: list[tuple[str, str, str, str]] = []  # dia_id, speaker, thing, place
    for s in range(1, sessions + 1):
        at = START + timedelta(days=9 * (s - 1), hours=rng.randint(0, 5))
        talk[f"session_{s}_date_time"] = at.strftime("%-I:%M %p on %-d %B, %Y").lower()
        lines = []
        for t in range(1, turns + 1):
            speaker = a if t % 2 else b
            thing, place = rng.choice(THINGS), rng.choice(PLACES)
            dia = f"D{s}:{t}"
            text = f"Last week I took my {thing} to {place}, sample {n}."
            lines.append({"speaker": speaker, "dia_id": dia, "text": text})
            said.append((dia, speaker, thing, place))
        talk[f"session_{s}"] = lines
    qa = []
    for dia, speaker, thing, place in rng.sample(said, questions):
        qa.append({"question": f"Where did {speaker} take the {thing}?", "answer": place,
                   "evidence": [dia], "category": 4})  # fmt: skip
    return {"sample_id": f"gen-{n}", "conversation": talk, "qa": qa}


def write(
    path: Path, count: int, *, sessions: int = 4, turns: int = 8, questions: int = 12
) -> Path:
    shape = {"sessions": sessions, "turns": turns, "questions": questions}
    path.write_text(json.dumps([conversation(n, **shape) for n in range(count)]))
    return path
