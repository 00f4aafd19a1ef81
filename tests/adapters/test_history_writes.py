"""Every turn of an imported LoCoMo conversation is stored exactly once, on every remote
adapter, even when the reply to one of its writes is lost and the write is sent again.

The conversation is one bulk session of twelve turns, loaded by one `write_history`; each
turn must travel under its own idempotency key (run, case, trial, write index, turn index).
Under one key for the whole history CortexDB answers turn 2 with 409 IDEMPOTENCY_CONFLICT,
TinyHumans answers turns 2..12 as replays of a claim already held, and mem0's listing shows
one write of twelve.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import SecretStr

from memeval.engines.reference import ReferenceEngine
from memeval.engines.reference.memory import ItemKind
from memeval.results import CaseResult, CaseStatus
from memeval.server import create_app
from tests.adapters.conftest import TOKEN, engine_at
from tests.adapters.fake_cortex import CortexLog
from tests.adapters.fake_mem0 import MEM0_KEY, FakeMem0
from tests.adapters.fake_tinyhumans import JWT, FakeTinyHumans
from tests.adapters.fakes import Fault, Seen, Wire, record, running
from tests.adapters.history import TURNS, run_conversation

TEXTS = [text for _, text in TURNS]


def assert_scored(result: CaseResult) -> None:
    assert result.status is CaseStatus.done and result.error is None, result.error
    assert result.probes and all(p.status.value != "error" for p in result.probes)
    assert result.score is not None


def assert_once(stored: list[str]) -> None:
    """Each history turn once; the probes' questions, logged by `pre_turn`, come on top."""
    counts = Counter(stored)
    assert {t: counts[t] for t in TEXTS} == dict.fromkeys(TEXTS, 1)


def history_keys(seen: list[Seen], key: Callable[[Seen], str]) -> list[str]:
    """The keys the history's writes were sent under, a retry's included."""
    return [key(s) for s in seen if any(json.dumps(t)[1:-1] in s.body.decode() for t in TEXTS)]


def lose_third_write(wire: Wire, path: str) -> None:
    """Lose the reply to the third write: the first two pass, the third is stored and failed."""
    passed = [Fault(status=0, path=path) for _ in range(2)]
    wire.inject(*passed, Fault(status=503, path=path, lost=True))


def log_texts(log: CortexLog) -> list[str]:
    return [s.event["content"]["text"] for s in log.events]


@pytest.mark.parametrize("lost", [False, True], ids=["clean", "lost-reply"])
def test_cortex_stores_every_turn_once(cortex, cortex_url, tmp_path: Path, lost: bool):
    if lost:
        lose_third_write(cortex.wire, "/v1/experience")
    result = run_conversation(engine_at("cortex", cortex_url, "enrich_wait=0"), tmp_path)
    assert_scored(result)
    assert_once(log_texts(cortex.log))
    keys = history_keys(
        cortex.wire.calls("/v1/experience"), lambda s: json.loads(s.body)["idempotency_key"]
    )
    assert len(set(keys)) == len(TEXTS)  # one key per turn, a retry reusing its own
    assert len(keys) == len(TEXTS) + lost


@pytest.mark.parametrize("lost", [False, True], ids=["clean", "lost-reply"])
def test_tinyhumans_stores_every_turn_once(monkeypatch, tmp_path: Path, lost: bool):
    fake = FakeTinyHumans()
    monkeypatch.setenv("TINYHUMANS_API_KEY", JWT)
    if lost:
        lose_third_write(fake.wire, "/memory/experience")
    with running(fake.app()) as url:
        result = run_conversation(engine_at("tinyhumans", url, "enrich_wait=0"), tmp_path)
    assert_scored(result)
    assert_once(log_texts(fake.log))
    claims = history_keys(
        fake.wire.calls("/memory/experience"), lambda s: s.headers["idempotency-key"]
    )
    assert len(set(claims)) == len(TEXTS) and len(claims) == len(TEXTS) + lost


@pytest.mark.parametrize("lost", [False, True], ids=["clean", "lost-reply"])
def test_mem0_counts_every_turn_once(monkeypatch, tmp_path: Path, lost: bool):
    """mem0 publishes no idempotency key, so a lost reply's retry is stored twice; each turn
    carries its own write tag, so the listing and search still count it once."""
    fake = FakeMem0()
    monkeypatch.setenv("MEM0_API_KEY", MEM0_KEY)
    if lost:
        lose_third_write(fake.wire, "/v3/memories/add/")
    with running(fake.app()) as url:
        result = run_conversation(engine_at("mem0", url, "poll=0.01&event_wait=5"), tmp_path)
    assert_scored(result)
    history = [m for m in fake.memories.values() if m["memory"] in TEXTS]
    tags = {m["memory"]: m["metadata"]["memeval_write"] for m in history}
    assert set(tags) == set(TEXTS) and len(set(tags.values())) == len(TEXTS)
    assert len(history) == len(TEXTS) + lost  # the retried write, stored again


@pytest.mark.parametrize("lost", [False, True], ids=["clean", "lost-reply"])
def test_http_stores_every_turn_once(monkeypatch, tmp_path: Path, lost: bool):
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", TOKEN)
    served = ReferenceEngine()
    app = create_app(served, SecretStr(TOKEN))
    wire = Wire()
    record(app, wire)
    if lost:
        lose_third_write(wire, "/turns/post")
    with running(app) as url:
        result = run_conversation(engine_at("http", url), tmp_path)
    assert_scored(result)
    (tenant,) = served._tenants
    memory = served._tenants[tenant].memory
    turns = Counter(item.source_id for item in memory.items if item.kind is ItemKind.turn)
    assert turns == {f"D1-{n}": 1 for n in range(1, len(TURNS) + 1)}
    keys = history_keys(wire.calls("/turns/post"), lambda s: s.headers["idempotency-key"])
    assert len(set(keys)) == len(TEXTS) and len(keys) == len(TEXTS) + lost
