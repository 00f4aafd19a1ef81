"""How far several judges agree: percent agreement and Cohen's kappa per pair, over the probes
both judged with a clear word, and the probes on which any two disagree.

Kappa discounts the agreement two judges would reach by chance given how often each says
"correct": two judges that both accept nearly everything agree often and mean little.
"""

from __future__ import annotations

from itertools import combinations

from pydantic import BaseModel

from memeval.results import CaseResult


class PairAgreement(BaseModel):
    a: str
    b: str
    n: int  # probes both judged with a clear word
    percent: float | None
    kappa: float | None  # None when undefined (no probes, or chance agreement is total)


class Disagreement(BaseModel):
    case_id: str
    trial: int
    probe: str
    phase: str
    verdicts: dict[str, bool | None]


class Agreement(BaseModel):
    pairs: list[PairAgreement]
    disagreements: list[Disagreement]


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for a, b in pairs if a == b) / n
    yes_a = sum(1 for a, _ in pairs if a) / n
    yes_b = sum(1 for _, b in pairs if b) / n
    chance = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1 - chance)


def agreement(cases: list[CaseResult]) -> Agreement | None:
    """None unless some probe was judged by more than one model."""
    rows: list[tuple[CaseResult, str, str, dict[str, bool | None]]] = []
    for case in cases:
        for p in case.probes:
            if len(p.judges) > 1:
                rows.append((case, p.probe, p.phase.value, {v.model: v.ok for v in p.judges}))
    if not rows:
        return None
    models = list(dict.fromkeys(m for *_, votes in rows for m in votes))
    pairs = []
    for a, b in combinations(models, 2):
        both = [
            (votes[a], votes[b])
            for *_, votes in rows
            if isinstance(votes.get(a), bool) and isinstance(votes.get(b), bool)
        ]
        same = sum(1 for x, y in both if x == y)
        pairs.append(
            PairAgreement(
                a=a,
                b=b,
                n=len(both),
                percent=100.0 * same / len(both) if both else None,
                kappa=cohen_kappa(both),  # type: ignore[arg-type]
            )
        )
    split = [
        Disagreement(
            case_id=case.case_id, trial=case.trial, probe=probe, phase=phase, verdicts=votes
        )
        for case, probe, phase, votes in rows
        if len(set(votes.values())) > 1
    ]
    return Agreement(pairs=pairs, disagreements=split)
