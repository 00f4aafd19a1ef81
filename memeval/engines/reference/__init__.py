"""The `reference` engine: embedded, in-memory, one isolated state per tenant.

Modules, from the bottom up: `lexicon` (related words, phrases, irregular forms, as data),
`text` (terms), `names` (the words that name one thing), `index` (hybrid lexical ranking),
`spans` (supporting passages), `facts` (bitemporal assertions, slots, conflicts), `graph` and
`interpret` (entities and structured readings), `bridges` (chains of records through prose),
`provenance` (sources, spans, derivations), `retrieval` (answering and abstaining);
for the lifecycle face `cues` (what wording signals), `beliefs` (statements, slots, beliefs),
`memory` (turns, documents, learnings), `disagreement` and `packs`; and `engine`, the `Engine`.
"""

from memeval.engines.reference.engine import ReferenceEngine

__all__ = ["ReferenceEngine"]
