"""`dense`: cosine similarity over all-MiniLM-L6-v2 embeddings of every write.

The second baseline memory papers report beside BM25: each turn, document or assertion is one
unit, embedded once (in this process, cached on disk by text hash), and a question ranks every
unit of its tenant by cosine. The units, packs, budget and bullets are `bm25`'s, so the two
differ in ranking alone. Dense retrieval has no notion of "no match": every unit gets a score,
so packs are always full and the engine never abstains.

The embedder is a setting (`dense?embedder=minilm`): the int8 tier by default, the float32
model as published when a figure must be the model's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import Field, field_validator
from pydantic_settings import SettingsConfigDict

from memeval import embeddings
from memeval.embeddings.weights import DIMENSIONS, MODEL
from memeval.engines.adapters.settings import Settings
from memeval.engines.bm25 import BM25Engine, _Tenant, _Unit

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

NOTE = (
    f"embeddings: {embeddings.model_name(embeddings.DEFAULT)}, {DIMENSIONS} dimensions, computed "
    "in this process; `?embedder=minilm` for the float32 model exactly as published"
)


class DenseSettings(Settings):
    """The tier is the user's to choose (`?embedder=` or `DENSE_EMBEDDER`): a figure that must
    be the model's own runs on float32, and every report names the tier it ran on."""

    model_config = SettingsConfigDict(env_prefix="DENSE_")
    engine = "dense"
    embedder: str = Field(
        default=embeddings.DEFAULT,
        description=f"What embeds the units: {', '.join(embeddings.NAMES)}. minilm-int8 is "
        "MiniLM with int8 products, under half of minilm's CPU, vectors within 0.01 of its "
        "cosine; minilm is the model exactly as published.",
    )

    @field_validator("embedder")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in embeddings.NAMES:
            raise ValueError(
                f"`{value}` is not an embedder; the choices: {', '.join(embeddings.NAMES)}"
            )
        return value


@dataclass
class Vectors:
    """A tenant's unit vectors, one row a unit, stacked on the first query after a write."""

    embedder: str = embeddings.DEFAULT
    rows: list[NDArray[np.float32]] = field(default_factory=list)
    _matrix: NDArray[np.float32] | None = None

    def extend(self, texts: list[str]) -> None:
        if texts:
            self.rows.append(embeddings.load(self.embedder).embed(texts))
            self._matrix = None

    def ranked(self, question: str) -> list[tuple[int, float]]:
        """Every unit, most similar first (the newer on ties)."""
        import numpy as np

        if not question.strip() or not self.rows:
            return []
        if self._matrix is None:
            self._matrix = np.vstack(self.rows)
        scores = self._matrix @ embeddings.load(self.embedder).embed([question])[0]
        order = sorted(range(len(scores)), key=lambda i: (float(scores[i]), i), reverse=True)
        return [(i, float(scores[i])) for i in order]


@dataclass
class Embedded(_Tenant):
    """A tenant whose units also have vectors: `dense` ranks by them, `hybrid` fuses them."""

    vectors: Vectors = field(default_factory=Vectors)


@dataclass
class DenseTenant(Embedded):
    def add(self, units: list[_Unit]) -> list[str]:
        self.units.extend(units)
        self.vectors.extend([u.text for u in units])
        return [u.id for u in units]

    def ranked(self, question: str) -> list[tuple[int, float]]:
        return self.vectors.ranked(question)


def models_used(settings: DenseSettings) -> list[str]:
    return [f"embeddings {embeddings.model_name(settings.embedder)}, in-process"]


class DenseEngine(BM25Engine):
    name = "dense"
    settings_model: type[DenseSettings] = DenseSettings
    verified_against = (
        f"{MODEL}, int8 in onnxruntime or float32 in numpy, each checked against "
        "sentence-transformers' published pair"
    )
    notes = (NOTE,)
    tenant_type: type[Embedded] = DenseTenant
    models_used = staticmethod(models_used)

    def __init__(self, settings: DenseSettings | None = None) -> None:
        super().__init__()
        # `create` passes the reference's settings; built directly, the environment's.
        self.settings = settings or self.settings_model()

    def new_tenant(self) -> Embedded:
        return self.tenant_type(vectors=Vectors(self.settings.embedder))
