"""Small files in the published shapes of LoCoMo and LongMemEval, written for these tests.

Every name, line and question here is invented; none comes from either benchmark.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LOCOMO: list[dict[str, Any]] = [
    {
        "sample_id": "conv-x1",
        "conversation": {
            "speaker_a": "Ines",
            "speaker_b": "Tobiah",
            "session_1_date_time": "9:05 am on 3 March, 2024",
            "session_1": [
                {"speaker": "Ines", "dia_id": "D1:1", "text": "Morning Tobiah! How was the week?"},
                {
                    "speaker": "Tobiah",
                    "dia_id": "D1:2",
                    "text": "Busy! I started restoring an old rowing boat in my garage.",
                },
                {
                    "speaker": "Ines",
                    "dia_id": "D1:3",
                    "text": "Fun! I finally booked my pottery course for April.",
                },
            ],
            "session_2_date_time": "6:40 pm on 20 March, 2024",
            "session_2": [
                {
                    "speaker": "Tobiah",
                    "dia_id": "D2:1",
                    "text": "The boat is varnished now, look!",
                    "img_url": ["http://example.invalid/boat.jpg"],
                    "blip_caption": "a photo of a wooden boat on a trailer",
                },
                {
                    "speaker": "Ines",
                    "dia_id": "D2:2",
                    "text": "Gorgeous. My sister Wren is moving to Lisbon in May.",
                },
            ],
        },
        "qa": [
            {
                "question": "What is Tobiah restoring?",
                "answer": "a rowing boat",
                "evidence": ["D1:2"],
                "category": 4,
            },
            {
                "question": "When did Ines book her pottery course?",
                "answer": "March 2024",
                "evidence": ["D1:3"],
                "category": 2,
            },
            {
                "question": "Where is Ines's sister moving, and what did Tobiah varnish?",
                "answer": 2024,
                "evidence": ["D2:2; D2:1", "D9:9"],
                "category": 1,
            },
            {
                "question": "What course did Tobiah book for April?",
                "adversarial_answer": "pottery",
                "evidence": ["D1:3"],
                "category": 5,
            },
        ],
        "event_summary": {},
        "observation": {},
        "session_summary": {},
    }
]

LONGMEMEVAL: list[dict[str, Any]] = [
    {
        "question_id": "q-travel-1",
        "question_type": "single-session-user",
        "question": "Which city did I say my cousin lives in?",
        "answer": "Tampere",
        "question_date": "2024/02/10 (Sat) 18:00",
        "haystack_session_ids": ["sess_b", "answer_a1"],
        "haystack_dates": ["2024/01/05 (Fri) 09:30", "2024/01/20 (Sat) 14:15"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "Can you suggest a soup for a cold evening?"},
                {"role": "assistant", "content": "A lentil soup with cumin is warming."},
            ],
            [
                {"role": "user", "content": "My cousin lives in Tampere.", "has_answer": True},
                {"role": "assistant", "content": "Tampere has lovely saunas."},
            ],
        ],
        "answer_session_ids": ["answer_a1"],
    },
    {
        "question_id": "q-travel-2_abs",
        "question_type": "single-session-user",
        "question": "Which city does my uncle live in?",
        "answer": "You did not mention your uncle.",
        "question_date": "2024/02/10 (Sat) 18:00",
        "haystack_session_ids": ["answer_b2"],
        "haystack_dates": ["2024/01/20 (Sat) 14:15"],
        "haystack_sessions": [
            [{"role": "user", "content": "My cousin lives in Tampere."}],
        ],
        "answer_session_ids": ["answer_b2"],
    },
]


def write(folder: Path, name: str, data: list[dict[str, Any]]) -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
