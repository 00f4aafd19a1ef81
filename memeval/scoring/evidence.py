"""Evidence recall and MRR: which pack units came from the writes that hold a probe's answer.

Substring checks reward any text that happens to hold the expected words; evidence asks whether
the engine brought back the *writes* the answer is in. An engine may say so itself
(`Pack.unit_ids`, ids it was given as `MemoryItem.id` / `Turn.id`); otherwise a unit is traced
to an evidence write by its words: most of the unit's content words (`TRACE_SHARE`) are in
the write, and at least two of them (or all of a shorter write's). Packs reword and prefix what
they recall (dates, speakers, section labels), so a share of the unit is asked, not equality.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from memeval.scoring.pack import content_words

TRACE_SHARE = 0.6
"""Share of a unit's content words that must be in an evidence write for the unit to count."""


class EvidenceScore(BaseModel):
    found: list[str] = Field(default_factory=list)
    rank: int | None = None


def _traced(unit: set[str], write: set[str]) -> bool:
    if not unit or not write:
        return False
    shared = len(unit & write)
    return shared >= min(2, len(write)) and shared / len(unit) >= TRACE_SHARE


def score_evidence(
    lines: list[str],
    unit_ids: list[list[str]] | None,
    evidence: dict[str, list[str]],
    aliases: dict[str, str],
) -> EvidenceScore:
    """`evidence` maps each evidence id to the texts written under it (an exchange has two);
    `aliases` maps engine-side write ids (`X.reply`) back to the evidence id they belong to.
    `unit_ids` is trusted only when it has one entry per unit."""
    if not evidence:
        return EvidenceScore()
    per_unit: list[set[str]] = []
    if unit_ids is not None and len(unit_ids) == len(lines):
        per_unit = [{aliases.get(i, i) for i in ids} & evidence.keys() for ids in unit_ids]
    else:
        words = {eid: [content_words(text) for text in texts] for eid, texts in evidence.items()}
        for line in lines:
            unit = content_words(line)
            per_unit.append(
                {eid for eid, texts in words.items() if any(_traced(unit, w) for w in texts)}
            )
    found = sorted(set().union(*per_unit)) if per_unit else []
    rank = next((i for i, ids in enumerate(per_unit, start=1) if ids), None)
    return EvidenceScore(found=found, rank=rank)
