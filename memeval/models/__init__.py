"""Stand-in models: an OpenAI-compatible service that needs no weights, no key and no network.

Engines built on a model (mem0's library, Graphiti) cannot run without an LLM and an embedder.
This service gives them deterministic ones, so CI and a first try run those engines end to end
on a laptop. What they measure is wiring and latency; what they cannot measure is quality, and
every report made with them says so in one line (`NOTE`).
"""

from __future__ import annotations

NOTE = "stand-in models (memeval models serve) measure wiring and latency, not quality"
CHAT_MODEL = "memeval/stand-in-chat"
EMBED_MODEL = "memeval/stand-in-embed"
