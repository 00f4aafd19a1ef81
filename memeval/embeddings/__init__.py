"""Text embeddings computed on this machine: no model service, no key, no torch.

- `minilm-int8` (the default): all-MiniLM-L6-v2, the sentence-transformer Chroma and many
  memory libraries embed with, 384 dimensions, its matrix products in int8 in onnxruntime
  (`memeval.embeddings.minilm_int8`): under half of float32's CPU, its vectors within 0.01 of
  cosine of the model's. The default because the exact tier cannot embed a benchmark's few
  thousand texts in the CPU a run can spare (docs/embeddings.md has the figures);
- `minilm`: the same model in float32 numpy (`memeval.embeddings.minilm`), exactly as
  published: the reference the int8 tier is checked against;
- `wordllama`: WordLlama's static 256-dimension vectors, a fast and weaker tier (optional:
  `pip install 'memeval[wordllama]'`);
- `ngram`: hashed character n-grams, for tests of wiring: close in spelling, never in meaning.

Both MiniLM tiers keep their vectors on disk by text hash, each tier under its own name, so a
text is embedded once per machine. `load` keeps one of each per process: the model's weights
are 90 MB and load once.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Protocol

from memeval.errors import UsageError

if TYPE_CHECKING:  # numpy loads with the first embedder, not with every import of memeval
    import numpy as np
    from numpy.typing import NDArray

NAMES = ("minilm-int8", "minilm", "wordllama", "ngram")
DEFAULT = "minilm-int8"


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
    if name in ("minilm", "minilm-int8"):
        from memeval.embeddings.weights import INT8_MODEL, MODEL

        return MODEL if name == "minilm" else INT8_MODEL
    if name == "wordllama":
        from memeval.embeddings.wordllama import NAME

        return NAME
    from memeval.embeddings.ngram import MODEL as NGRAM

    return NGRAM
