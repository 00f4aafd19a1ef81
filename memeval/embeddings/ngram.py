"""Deterministic embeddings: hashed character n-grams, signed, L2-normalised.

Two texts are close when they share spelling, never meaning, so a paraphrase that changes the
words costs an engine what it would cost with no semantic model at all: the stand-in makes no
engine look smarter than its own retrieval. Hashing uses blake2b, not `hash()`, so every
process and every run gives a text the same vector.
"""

from __future__ import annotations

import hashlib
import math
import re

import numpy as np
from numpy.typing import NDArray

MODEL = "memeval/stand-in-embed"
DIMENSIONS = 256
GRAMS = (3, 4)
_SPACE = re.compile(r"\s+")


def embed(text: str, dimensions: int = DIMENSIONS) -> list[float]:
    """A unit vector for `text` (all zeros but one for text with no characters)."""
    padded = f" {_SPACE.sub(' ', text.lower()).strip()} "
    vector = [0.0] * dimensions
    for size in GRAMS:
        for start in range(max(0, len(padded) - size + 1)):
            digest = hashlib.blake2b(padded[start : start + size].encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % dimensions
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0:
        # A zero vector breaks cosine distance in every vector store; an empty text still
        # needs a direction, and one fixed axis keeps it deterministic.
        vector[0] = 1.0
        return vector
    return [v / norm for v in vector]


class NgramHash:
    name = MODEL
    dimensions = DIMENSIONS

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        return np.array([embed(t) for t in texts], dtype=np.float32).reshape(-1, DIMENSIONS)
