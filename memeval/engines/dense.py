"""`dense`: cosine similarity over all-MiniLM-L6-v2 embeddings of every write.

The second baseline memory papers report beside BM25: each turn, document or assertion is one
unit, embedded once (in this process, cached on disk by text hash), and a question ranks every
unit of its tenant by cosine. The units, packs, budget and bullets are `bm25`'s, so the two
differ in ranking alone. Dense retrieval has no notion of "no match": every unit gets a score,
so packs are always full and the engine never abstains.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memeval.embeddings.weights import DIMENSIONS, MODEL
from memeval.engines.bm25 import BM25Engine, _Tenant, _Unit

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

EMBEDDER = "minilm"
NOTE = f"embeddings: {MODEL} ({DIMENSIONS} dimensions), computed in this process"


@dataclass
class Vectors:
    """A tenant's unit vectors, one row a unit, stacked on the first query after a write."""

    rows: list[NDArray[np.float32]] = field(default_factory=list)
    _matrix: NDArray[np.float32] | None = None

    def extend(self, texts: list[str]) -> None:
        from memeval import embeddings

        if texts:
            self.rows.append(embeddings.load(EMBEDDER).embed(texts))
            self._matrix = None

    def ranked(self, question: str) -> list[tuple[int, float]]:
        """Every unit, most similar first (the newer on ties)."""
        import numpy as np

        from memeval import embeddings

        if not question.strip() or not self.rows:
            return []
        if self._matrix is None:
            self._matrix = np.vstack(self.rows)
        scores = self._matrix @ embeddings.load(EMBEDDER).embed([question])[0]
        order = sorted(range(len(scores)), key=lambda i: (float(scores[i]), i), reverse=True)
        return [(i, float(scores[i])) for i in order]


@dataclass
class DenseTenant(_Tenant):
    vectors: Vectors = field(default_factory=Vectors)

    def add(self, units: list[_Unit]) -> list[str]:
        self.units.extend(units)
        self.vectors.extend([u.text for u in units])
        return [u.id for u in units]

    def ranked(self, question: str) -> list[tuple[int, float]]:
        return self.vectors.ranked(question)


def models_used(settings: object) -> list[str]:
    return [f"embeddings {MODEL}, in-process"]


class DenseEngine(BM25Engine):
    name = "dense"
    verified_against = f"{MODEL} in numpy, checked against sentence-transformers' published pair"
    notes = (NOTE,)
    tenant_type = DenseTenant
    models_used = staticmethod(models_used)
