"""LoCoMo (Maharana et al., ACL 2024): long conversations between two people, with questions.

The published file is a JSON list of samples. Each holds `conversation` (`speaker_a`,
`speaker_b`, `session_N` turn lists and `session_N_date_time` strings such as
"1:56 pm on 8 May, 2023") and `qa` items (`question`, `answer`, `evidence` as dialog ids like
"D1:3", `category` 1-5; category 5 is adversarial, carries `adversarial_answer` and is right
only when the memory says it was never said).

Reading is lenient where the published data is uneven (an answer given as a number, a turn's
photo caption, an evidence list written "D8:6; D9:17") and strict where a guess would change
what is measured: an unreadable date or a sample without sessions is an error naming its place.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memeval.errors import SuiteError, UsageError
from memeval.importers.pinning import Pin
from memeval.importers.stream import json_items
from memeval.scoring.kpis import APART
from memeval.suites.scenario import FreeTurn, Probe, Scenario, Style, Thread

PINS = (
    Pin(
        name="locomo10.json",
        sha256="79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
    ),
    Pin(
        name="locomo-dev5.json (its first five conversations)",
        sha256="d44a21fdf3e2ac6a4b18c125b44c94056ddb71cbe440ca2e4e8523282f3c9b66",
    ),
)
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
_SESSION = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"D(\d+):(\d+)")


class Category(IntEnum):
    """As the data numbers them."""

    multi_hop = 1
    temporal = 2
    open_domain = 3
    single_hop = 4
    adversarial = 5

    @property
    def tag(self) -> str:
        return self.name.replace("_", "-")


COUNTED = frozenset(
    {Category.multi_hop, Category.temporal, Category.open_domain, Category.single_hop}
)
"""What published LoCoMo tables count: categories 1 to 4. The adversarial one is reported
apart (its probes carry `APART`), unless `?categories=` names it."""


AUDIT_FILE = Path(__file__).parent / "data" / "locomo_audit.json"
GOLD_WRONG = "audit:gold-wrong"
GOLD_KEPT = "audit:gold-kept"
"""Probe tags on categories 1-4 (the audit's scope): the tag rows of a report then give each
number without the audited questions (`audit:gold-kept`) beside the overall one with them."""


class AuditedQuestion(BaseModel):
    sample_id: str
    qa_index: int = Field(ge=0)
    category: Category
    error: str


class Audit(BaseModel):
    about: str
    source: dict[str, str]
    key: str
    questions: list[AuditedQuestion]

    def wrong(self, sample_id: str) -> set[int]:
        return {q.qa_index for q in self.questions if q.sample_id == sample_id}


@cache
def audit() -> Audit:
    """The published audit's findings, shipped with memeval as facts (see its `source`)."""
    return Audit.model_validate_json(AUDIT_FILE.read_text(encoding="utf-8"))


def parse_categories(text: str) -> frozenset[Category]:
    """`1,2,3,4,5`, `1-4` or `all`: the categories a run counts in its overall numbers."""
    if text.strip() == "all":
        return frozenset(Category)
    chosen: set[Category] = set()
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            low, _, high = part.partition("-")
            chosen |= {Category(n) for n in range(int(low), int(high or low) + 1)}
    except ValueError:
        chosen = set()
    if not chosen:
        raise UsageError(
            f"LoCoMo categories `{text}` are not numbers from 1 to 5",
            fix="e.g. locomo:PATH?categories=1,2,3,4,5 (or 1-4, or all)",
        )
    return frozenset(chosen)


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class RawTurn(_Lenient):
    speaker: str
    dia_id: str
    text: str = ""
    blip_caption: str | None = None


class RawQA(_Lenient):
    question: str
    answer: str | int | float | None = None
    adversarial_answer: str | int | float | None = None
    evidence: list[str] = Field(default_factory=list)
    category: Category


class RawSample(_Lenient):
    sample_id: str
    conversation: dict[str, Any]
    qa: list[RawQA]


class LocomoTurn(BaseModel):
    id: str  # the dialog id, e.g. D1:3
    speaker: str
    text: str  # what was said, with a shared photo's caption in brackets


class LocomoSession(BaseModel):
    number: int
    at: datetime
    turns: list[LocomoTurn]


class LocomoQuestion(BaseModel):
    question: str
    answer: str | None  # None for an adversarial question: nothing was said
    trap: str | None = None  # an adversarial question's tempting wrong answer
    evidence: list[str]  # dialog ids that exist in the conversation
    category: Category


class Conversation(BaseModel):
    id: str
    speakers: tuple[str, str]
    sessions: list[LocomoSession]
    questions: list[LocomoQuestion]

    def turn(self, dia_id: str) -> LocomoTurn | None:
        for session in self.sessions:
            for turn in session.turns:
                if turn.id == dia_id:
                    return turn
        return None


def read(path: Path) -> list[Conversation]:
    return list(conversations(path))


def conversations(path: Path) -> Iterator[Conversation]:
    """The file's conversations one at a time."""
    for n, raw in enumerate(json_items(path, "LoCoMo", "give the published locomo10.json")):
        yield _conversation(raw, path, n)


def _conversation(raw: Any, path: Path, n: int) -> Conversation:
    try:
        sample = RawSample.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in (n, *first["loc"]))
        raise SuiteError(
            str(first["msg"]), path=path, field=where, fix="give the published locomo10.json"
        ) from None
    conv = sample.conversation
    speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
    sessions: list[LocomoSession] = []
    for key, turns in conv.items():
        match = _SESSION.match(key)
        if match is None or not isinstance(turns, list):
            continue
        number = int(match.group(1))
        field = f"{n}.conversation.{key}_date_time"
        stamp = conv.get(f"{key}_date_time")
        try:
            at = datetime.strptime(str(stamp), DATE_FORMAT).replace(tzinfo=UTC)
        except ValueError:
            raise SuiteError(
                f"session date {stamp!r} is not like '1:56 pm on 8 May, 2023'",
                path=path,
                field=field,
                fix="give the published locomo10.json",
            ) from None
        try:
            parsed = [RawTurn.model_validate(t) for t in turns]
        except ValidationError as exc:
            raise SuiteError(
                str(exc.errors()[0]["msg"]), path=path, field=f"{n}.conversation.{key}"
            ) from None
        sessions.append(LocomoSession(number=number, at=at, turns=[_turn(t) for t in parsed]))
    if not sessions:
        raise SuiteError(
            f"sample `{sample.sample_id}` has no `session_N` turn lists",
            path=path,
            field=f"{n}.conversation",
            fix="give the published locomo10.json",
        )
    sessions.sort(key=lambda s: s.number)
    known = {t.id for s in sessions for t in s.turns}
    questions = [_question(qa, known) for qa in sample.qa]
    return Conversation(
        id=sample.sample_id, speakers=speakers, sessions=sessions, questions=questions
    )


def _turn(raw: RawTurn) -> LocomoTurn:
    text = raw.text.strip()
    if raw.blip_caption:
        text = f"{text} [shared {raw.blip_caption.strip()}]".strip()
    return LocomoTurn(id=raw.dia_id, speaker=raw.speaker, text=text)


def _question(raw: RawQA, known: set[str]) -> LocomoQuestion:
    """Evidence ids are read wherever they stand in the published strings ("D8:6; D9:17"),
    and ids naming no turn are left out rather than counted as evidence nobody can find."""
    found = [f"D{a}:{b}" for item in raw.evidence for a, b in _DIA_ID.findall(item)]
    evidence = list(dict.fromkeys(e for e in found if e in known))
    adversarial = raw.category is Category.adversarial
    answer = None if adversarial or raw.answer is None else str(raw.answer)
    trap = raw.adversarial_answer if adversarial else None
    return LocomoQuestion(
        question=raw.question.strip(),
        answer=answer,
        trap=None if trap is None else str(trap),
        evidence=evidence,
        category=raw.category,
    )


def turn_id(dia_id: str) -> str:
    """A dialog id as a case id: `D1:3` -> `D1-3` (ids in cases allow no colon)."""
    return dia_id.replace(":", "-")


def scenario(conv: Conversation, counted: frozenset[Category] = COUNTED) -> Scenario:
    """One conversation, one scenario: each session a thread loaded in bulk at its recorded
    date, each question a probe that asks without being written to memory. An adversarial
    question is an abstention probe: nothing in the conversation answers it as asked. A
    question of a category not `counted` is tagged `APART`."""
    start = min(s.at for s in conv.sessions)
    threads = [
        Thread(
            id=f"session-{s.number}",
            day=(s.at.date() - start.date()).days,
            start=s.at.time(),
            bulk=True,
            turns=[
                FreeTurn(
                    id=turn_id(t.id),
                    speaker=t.speaker,
                    text=t.text or "(no words)",
                    at=s.at + timedelta(minutes=i),
                )
                for i, t in enumerate(s.turns)
            ],
        )
        for s in conv.sessions
    ]
    wrong = audit().wrong(conv.id)
    probes = [
        _probe(n, qa, qa.category in counted, n in wrong)
        for n, qa in enumerate(conv.questions)
        if _askable(qa)
    ]
    a, b = conv.speakers
    return Scenario(
        name=f"locomo-{conv.id}",
        title=f"LoCoMo {conv.id}: {a} and {b}",
        about="A LoCoMo conversation from the user's own copy of the benchmark.",
        start=start.date(),
        log_probes=False,
        threads=threads,
        probes=probes,
    )


def _askable(qa: LocomoQuestion) -> bool:
    return qa.category is Category.adversarial or bool(qa.answer and qa.answer.strip())


def _probe(n: int, qa: LocomoQuestion, counted: bool, audited_wrong: bool) -> Probe:
    tags = [f"category:{qa.category.tag}"]
    if qa.category is not Category.adversarial:  # the audit's scope: categories 1 to 4
        tags.append(GOLD_WRONG if audited_wrong else GOLD_KEPT)
    common: dict[str, Any] = {
        "id": f"q{n + 1}",
        "question": qa.question,
        "style": Style.paraphrase,  # questions reword what was said
        "evidence": [turn_id(e) for e in qa.evidence],
        "tags": [*tags, *([] if counted else [APART])],
    }
    if qa.category is Category.adversarial:
        return Probe(abstain=True, **common)
    assert qa.answer is not None
    return Probe(expect=[qa.answer.strip()], answer=qa.answer.strip(), **common)
