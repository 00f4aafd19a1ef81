"""LongMemEval (Wu et al., ICLR 2025): one question per instance, each over its own haystack.

The published files (longmemeval_s / _m / _oracle) are a JSON list of instances with
`question_id`, `question_type`, `question`, `answer`, `question_date`, `haystack_session_ids`,
`haystack_dates`, `haystack_sessions` (each a list of `{role, content}` turns, evidence turns
marked `has_answer: true`) and `answer_session_ids`. A `question_id` ending in `_abs` is an
abstention question. Dates are written "2023/05/20 (Sat) 02:21".

Each instance becomes one scenario on its own tenant: each haystack session a thread loaded in
bulk at its date, the question one probe asked at `question_date`. Its evidence is the turns
marked `has_answer` in the answer sessions, or every turn of those sessions when none is
marked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memeval.errors import SuiteError
from memeval.importers.pinning import Pin
from memeval.importers.stream import json_items
from memeval.suites.scenario import FreeTurn, Probe, Scenario, Style, Thread

PINS: tuple[Pin, ...] = ()  # no published hash could be checked here; see `check_pins`
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class RawTurn(_Lenient):
    role: Literal["user", "assistant"]
    content: str
    has_answer: bool = False


class Instance(_Lenient):
    question_id: str
    question_type: str
    question: str
    answer: str | int | float
    question_date: str
    haystack_session_ids: list[str]
    haystack_dates: list[str]
    haystack_sessions: list[list[RawTurn]]
    answer_session_ids: list[str] = Field(default_factory=list)

    @property
    def abstains(self) -> bool:
        return self.question_id.endswith("_abs")


def read(path: Path) -> list[Instance]:
    return list(instances(path))


def instances(path: Path) -> Iterator[Instance]:
    """The file's instances one at a time: a 300 MB haystack file is never held whole."""
    for n, raw in enumerate(json_items(path, "LongMemEval", _FIX)):
        try:
            instance = Instance.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in (n, *first["loc"]))
            raise SuiteError(str(first["msg"]), path=path, field=where, fix=_FIX) from None
        sizes = {len(instance.haystack_session_ids), len(instance.haystack_dates)}
        if sizes != {len(instance.haystack_sessions)}:
            raise SuiteError(
                "haystack_session_ids, haystack_dates and haystack_sessions differ in length",
                path=path,
                field=f"{n}.haystack_sessions",
                fix=_FIX,
            )
        yield instance


_FIX = "give a published LongMemEval file (longmemeval_s.json, _m or _oracle)"


def _when(stamp: str, path: Path, field: str) -> datetime:
    try:
        return datetime.strptime(stamp.strip(), DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise SuiteError(
            f"date {stamp!r} is not like '2023/05/20 (Sat) 02:21'", path=path, field=field
        ) from None


def slug(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-._") or "x"


def scenario(instance: Instance, path: Path, n: int) -> Scenario:
    dated = [
        (_when(stamp, path, f"{n}.haystack_dates.{i}"), sid, turns)
        for i, (stamp, sid, turns) in enumerate(
            zip(
                instance.haystack_dates,
                instance.haystack_session_ids,
                instance.haystack_sessions,
                strict=True,
            )
        )
    ]
    dated.sort(key=lambda entry: entry[0])
    start = dated[0][0] if dated else _when(instance.question_date, path, f"{n}.question_date")
    threads: list[Thread] = []
    evidence: list[str] = []
    answering = set(instance.answer_session_ids)
    for k, (at, sid, turns) in enumerate(dated):
        if not turns:
            continue
        ids = [f"{slug(sid)}.{j}" for j in range(len(turns))]
        if sid in answering:
            marked = [i for i, t in zip(ids, turns, strict=True) if t.has_answer]
            evidence.extend(marked or ids)
        threads.append(
            Thread(
                id=f"s{k}-{slug(sid)}"[:80],
                day=(at.date() - start.date()).days,
                start=at.time(),
                bulk=True,
                turns=[
                    FreeTurn(
                        id=i, role=t.role, text=t.content or "(empty)", at=at + timedelta(minutes=j)
                    )
                    for j, (i, t) in enumerate(zip(ids, turns, strict=True))
                ],
            )
        )
    asked = _when(instance.question_date, path, f"{n}.question_date")
    last = max((turn.at for t in threads for turn in t.turns if turn.at), default=asked)
    probe: dict[str, Any] = {
        "id": "q",
        "question": instance.question,
        "style": Style.paraphrase,
        "evidence": list(dict.fromkeys(evidence)),
        "tags": [f"category:{slug(instance.question_type)}"],
    }
    answer = str(instance.answer).strip()
    if instance.abstains:
        probe["abstain"] = True
    else:
        probe.update(expect=[answer], answer=answer)
    return Scenario(
        name=f"longmemeval-{slug(instance.question_id)}"[:80],
        title=f"LongMemEval {instance.question_id} ({instance.question_type})",
        about="A LongMemEval question over its own haystack, from the user's own copy.",
        start=start.date(),
        now=asked if asked >= last else None,  # a question dated before its history asks after it
        log_probes=False,
        threads=threads,
        probes=[Probe(**probe)],
    )
