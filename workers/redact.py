"""Masks this process's secrets in text that leaves it: error messages bound for the store.

An engine's exception can quote the request that failed, key included; the store outlives the
run and is read by whoever gets the reports, so secrets are masked before a result is written.
"""

from __future__ import annotations

import os

from memeval.store.scrub import SECRET_MARKERS

MASK = "***"
MIN_SECRET = 6  # shorter values would mask ordinary words


def secret_values() -> list[str]:
    values = {
        value
        for name, value in os.environ.items()
        if any(marker in name.lower() for marker in SECRET_MARKERS) and len(value) >= MIN_SECRET
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    for value in secret_values():
        text = text.replace(value, MASK)
    return text
