"""Models for engines built on an LLM and an embedder, with no weights download, key or network.

Engines built on a model (mem0's library, Graphiti) cannot run without both. `memeval models
serve` gives them real embeddings (all-MiniLM-L6-v2, computed here; by default its int8 tier,
which engines ask for by that tier's name) and a deterministic
stand-in chat model. The embeddings make their retrieval mean what it would with a real
deployment's small embedder; the chat model only splits text into sentences, so what an
engine's LLM would add (extraction, deduplication, reranking) is measured as wiring, and every
report made with it says so in one line (`NOTE`).
"""

from __future__ import annotations

from memeval.embeddings import DEFAULT, model_name

EMBED_MODEL = model_name(DEFAULT)

NOTE = (
    f"memeval models serve: embeddings by {EMBED_MODEL}; its chat model is a stand-in that "
    "splits text into sentences, so LLM steps measure wiring, not quality"
)
CHAT_MODEL = "memeval/stand-in-chat"
__all__ = ["CHAT_MODEL", "EMBED_MODEL", "NOTE"]
