"""A small conversation in LoCoMo's published shape, written for these tests, and a helper
that imports it and runs it as one case.

Every name and line is invented. One session of twelve turns: the importer makes it one bulk
thread, which the runner loads with a single `write_history` of twelve turns, the call every
LoCoMo and LongMemEval case makes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from memeval.engines.base import Engine
from memeval.results import CaseResult
from memeval.runner import RunOptions, run_case
from memeval.suites.catalog import resolve

TURNS = [
    ("Marit", "Hi Oskar, did the kayak trip happen in the end?"),
    ("Oskar", "It did, we paddled the whole fjord loop in two days."),
    ("Marit", "Impressive. I spent the weekend repotting my fig tree."),
    ("Oskar", "Is that the fig your grandmother gave you?"),
    ("Marit", "Yes, it finally outgrew the clay pot by the window."),
    ("Oskar", "My brother Lauri starts a job at a bakery in Turku next month."),
    ("Marit", "Lovely, he always baked the cardamom buns at parties."),
    ("Oskar", "He still does, every Sunday without fail."),
    ("Marit", "I signed up for a night class in bookbinding."),
    ("Oskar", "Which evening does it meet?"),
    ("Marit", "Thursdays, in the old library annex."),
    ("Oskar", "Bring me a notebook when you have made one!"),
]

SAMPLE: list[dict[str, Any]] = [
    {
        "sample_id": "conv-t12",
        "conversation": {
            "speaker_a": "Marit",
            "speaker_b": "Oskar",
            "session_1_date_time": "4:15 pm on 9 June, 2024",
            "session_1": [
                {"speaker": who, "dia_id": f"D1:{n}", "text": text}
                for n, (who, text) in enumerate(TURNS, start=1)
            ],
        },
        "qa": [
            {
                "question": "Where does Lauri start his new job?",
                "answer": "a bakery in Turku",
                "evidence": ["D1:6"],
                "category": 4,
            },
            {
                "question": "Which evening does Marit's bookbinding class meet?",
                "answer": "Thursdays",
                "evidence": ["D1:11"],
                "category": 4,
            },
        ],
    }
]


def write_sample(folder: Path) -> Path:
    path = folder / "locomo-t12.json"
    path.write_text(json.dumps(SAMPLE))
    return path


def run_conversation(engine: Engine, folder: Path, run_id: str = "hist") -> CaseResult:
    """Import the conversation (`locomo:PATH`, as `memeval run --suite` does) and run it as
    one case, keeping what it wrote so the test can count it on the fake."""
    (located,) = resolve(f"locomo:{write_sample(folder)}").cases

    async def go() -> CaseResult:
        try:
            options = RunOptions(keep=True, settle_timeout=20)
            return await run_case(located.case, engine, run_id=run_id, options=options)
        finally:
            await engine.close()

    return asyncio.run(go())
