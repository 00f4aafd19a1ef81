"""`hybrid`: BM25 and dense rankings fused by reciprocal rank, the usual hybrid baseline.

A unit's score is the sum over the two rankings of 1 / (60 + its rank), the fusion and the
constant of Cormack, Clarke and Büttcher (SIGIR 2009) that vector databases ship as their
hybrid search. BM25 ranks only units sharing a term with the question, dense ranks all, so a
unit that both find rises above one that either finds alone. Units, packs and budget are
`bm25`'s; the embedder is `dense`'s setting (`hybrid?embedder=minilm`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_settings import SettingsConfigDict

from memeval.embeddings.weights import MODEL
from memeval.engines.bm25 import _Unit
from memeval.engines.dense import DenseEngine, DenseSettings, Embedded

RRF_K = 60


def fuse(*rankings: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of rankings of the same units, best first (newer on ties)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, (unit, _) in enumerate(ranking, 1):
            scores[unit] = scores.get(unit, 0.0) + 1 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda pair: (pair[1], pair[0]), reverse=True)


class HybridSettings(DenseSettings):
    model_config = SettingsConfigDict(env_prefix="HYBRID_")
    engine = "hybrid"


@dataclass
class HybridTenant(Embedded):
    def add(self, units: list[_Unit]) -> list[str]:
        self.vectors.extend([u.text for u in units])
        return super().add(units)

    def ranked(self, question: str) -> list[tuple[int, float]]:
        return fuse(super().ranked(question), self.vectors.ranked(question))


class HybridEngine(DenseEngine):
    name = "hybrid"
    settings_model = HybridSettings
    verified_against = f"bm25s (Lucene BM25) and {MODEL}, fused by reciprocal rank (k=60)"
    tenant_type = HybridTenant
