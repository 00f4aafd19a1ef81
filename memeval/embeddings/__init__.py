"""Text embeddings computed on this machine: no model service, no key, no torch.

- `minilm` (the default): all-MiniLM-L6-v2, the sentence-transformer Chroma and many memory
  libraries embed with, 384 dimensions, in numpy (`memeval.embeddings.minilm`), its vectors
  kept on disk by text hash so a text is embedded once;
- `minilm-int8`: the same model with int8 matrix products in onnxruntime, about twice as fast
  on a CPU, its vectors within 0.01 of cosine of `minilm`'s (optional: `pip install
  'memeval[int8]'`; `memeval.embeddings.minilm_int8`);
- `wordllama`: WordLlama's static 256-dimension vectors, a fast and weaker tier (optional:
  `pip install 'memeval[wordllama]'`);
- `ngram`: hashed character n-grams, for tests of wiring: close in spelling, never in meaning.

`load` keeps one of each per process: the model's weights are 90 MB and load once.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Protocol

from memeval.errors import UsageError

if TYPE_CHECKING:  # numpy loads with the first embedder, not with every import of memeval
    import numpy as np
    from numpy.typing import NDArray

NAMES = ("minilm", "minilm-int8", "wordllama", "ngram")
DEFAULT = "minilm"


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        """One unit vector a text, in order."""
        ...


class Cached:
    """An embedder whose vectors are read from, and added to, the on-disk cache."""

    def __init__(self, inner: Embedder) -> None:
        from memeval.embeddings.cache import VectorCache
        from memeval.embeddings.weights import cache_root

        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        self.store = VectorCache(cache_root() / "embeddings.sqlite")
        self.computed = 0  # texts this process had to embed: the rest came from disk

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        vectors, computed = self.store.through(self.name, self.dimensions, texts, self.inner.embed)
        self.computed += computed
        return vectors


@cache
def load(name: str = DEFAULT) -> Embedder:
    if name == "minilm":
        from memeval.embeddings import minilm, weights

        return Cached(minilm.MiniLM(weights.ensure()))
    if name == "minilm-int8":
        from memeval.embeddings import weights
        from memeval.embeddings.minilm_int8 import MiniLMInt8

        return Cached(MiniLMInt8(weights.ensure()))
    if name == "wordllama":
        from memeval.embeddings.wordllama import WordLlama

        return WordLlama()
    if name == "ngram":
        from memeval.embeddings.ngram import NgramHash

        return NgramHash()
    raise UsageError(f"unknown embedder `{name}`", fix=f"use one of: {', '.join(NAMES)}")


def model_name(name: str) -> str:
    """The published name of an embedder, without loading it."""
    if name == "minilm":
        from memeval.embeddings.weights import MODEL

        return MODEL
    if name == "minilm-int8":
        from memeval.embeddings.minilm_int8 import NAME as INT8

        return INT8
    if name == "wordllama":
        from memeval.embeddings.wordllama import NAME

        return NAME
    from memeval.embeddings.ngram import MODEL as NGRAM

    return NGRAM
