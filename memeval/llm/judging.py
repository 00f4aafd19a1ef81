"""Several judges on one answer: each is asked with the prompt for the probe's question type,
each verdict is kept, and the probe's verdict is their majority.

A tie is not a majority for "correct", so it counts as wrong; a judge that answered neither
word abstains from the vote. Agreement between judges is read from the kept verdicts
(`memeval.llm.agreement`), never from the majority.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memeval.llm.judge import JudgeMode, judge_messages, prompt_id, question_type, verdict
from memeval.results import JudgeVerdict, ProbeResult

if TYPE_CHECKING:
    from memeval.llm.answer import Answerer, AnswerResult


@dataclass
class Judged:
    verdicts: list[JudgeVerdict] = field(default_factory=list)
    usd_micros: int = 0
    stopped: AnswerResult | None = None  # the reply that ended the judging (budget, error)


def majority(verdicts: list[bool | None]) -> bool | None:
    """True when more judges said right than wrong; None when none said either word."""
    right = sum(1 for v in verdicts if v is True)
    wrong = sum(1 for v in verdicts if v is False)
    if right == wrong == 0:
        return None
    return right > wrong


async def judge_probe(
    judges: list[Answerer], result: ProbeResult, gold: str, mode: JudgeMode
) -> Judged:
    """Asks every judge about `result.model_answer`; stops at the first reply that is skipped
    for budget or fails, so a probe is judged by all its judges or not at all."""
    out = Judged()
    if result.model_answer is None:
        return out
    kind = question_type(result.tags, abstain=result.abstain)
    chat = judge_messages(result.question, gold, result.model_answer, kind, mode)
    for judge in judges:
        graded = await judge.complete(chat)
        out.usd_micros += graded.usd_micros
        if graded.skipped_budget or graded.error is not None:
            out.stopped = graded
            out.verdicts = []
            return out
        reply = (graded.text or "").strip()[:40]
        out.verdicts.append(
            JudgeVerdict(
                model=judge.spec.model,
                ok=verdict(graded.text),
                note=f"{prompt_id(kind, mode)}: {reply}",
            )
        )
    return out


def apply(judged: Judged, result: ProbeResult) -> None:
    """Writes the kept verdicts and their majority onto the probe's result."""
    if not judged.verdicts:
        return
    result.judges = judged.verdicts
    result.judge_ok = majority([v.ok for v in judged.verdicts])
    result.judge_note = (
        judged.verdicts[0].note.split(":", 1)[0]
        + ": "
        + ", ".join(
            f"{v.model}={'-' if v.ok is None else 'right' if v.ok else 'wrong'}"
            for v in judged.verdicts
        )
    )
