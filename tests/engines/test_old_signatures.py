"""Engines written before `question` joined `start_session`/`compile_context` still run.

The base class adapts such an override once, when its class is made, and warns its author; the
runner, `memeval serve`, the rate-limited view and the farm's shield then pass `question=` to
every engine alike. An engine without a use for the question scores exactly as before."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from pydantic import SecretStr

from memeval.engines.base import Engine
from memeval.engines.reference import ReferenceEngine
from memeval.engines.registry import create
from memeval.engines.types import Pack
from memeval.llm.rates import parse_rate
from memeval.results import CaseResult, CaseStatus
from memeval.runner import run_case
from memeval.runner.throttle import throttle_engine
from memeval.server import create_app
from memeval.suites.catalog import fixtures_root
from memeval.suites.loader import load_paths
from memeval_farm.budget import connect_redis
from memeval_farm.limiter import Limiter
from memeval_farm.shield import shield
from tests.adapters.fakes import running
from tests.llm.redis_support import REDIS_URL, tagged_keys

TOKEN = "old-signature-token"


def old_style() -> ReferenceEngine:
    """A reference engine whose two overrides predate `question`, as a plug-in's would."""
    with pytest.warns(DeprecationWarning, match="does not accept `question") as warned:

        class OldStyle(ReferenceEngine):
            name = "old-style"

            def __init__(self) -> None:
                super().__init__()
                self.called: list[str] = []

            async def start_session(self, tenant, agent, thread, focus, at) -> Pack:  # type: ignore[no-untyped-def, override]
                self.called.append("start_session")
                return await super().start_session(tenant, agent, thread, focus, at)

            async def compile_context(self, tenant, agent, heading, at) -> Pack:  # type: ignore[no-untyped-def, override]
                self.called.append("compile_context")
                return await super().compile_context(tenant, agent, heading, at)

    assert sorted(str(w.message).split(" ")[0].rsplit(".", 1)[1] for w in warned) == [
        "compile_context",
        "start_session",
    ]
    return OldStyle()


def _case():  # resumed sessions: the probes that reach `start_session`
    return load_paths([fixtures_root() / "lifecycle" / "restart_recall.yaml"])[0].case


def _scores(result: CaseResult) -> list[tuple[str, str, bool, str]]:
    return [(p.probe, p.phase, p.hit, p.pack) for p in result.probes]


def _run(engine: Engine) -> CaseResult:
    return asyncio.run(run_case(_case(), engine, run_id="old-signatures"))


@pytest.fixture(scope="module")
def baseline() -> CaseResult:
    return _run(ReferenceEngine())


def test_the_runner_runs_an_old_style_engine_as_before(baseline: CaseResult) -> None:
    engine = old_style()
    result = _run(engine)
    assert result.status is CaseStatus.done, result.error
    assert "start_session" in engine.called
    assert _scores(result) == _scores(baseline)


def test_the_question_is_dropped_not_passed(baseline: CaseResult) -> None:
    engine = old_style()
    at = datetime.now(UTC)
    pack = asyncio.run(engine.start_session("t", "a", None, "timezone", at, question="When?"))
    assert isinstance(pack, Pack) and engine.called == ["start_session"]
    asyncio.run(engine.compile_context("t", "a", "Rules", at, question="Which?"))
    assert engine.called == ["start_session", "compile_context"]


def test_behind_the_shield_and_the_throttle(baseline: CaseResult) -> None:
    engine = old_style()
    assert _scores(_run(shield(engine))) == _scores(baseline)
    keys = tagged_keys()
    tag = next(keys)

    async def throttled() -> CaseResult:
        redis = await connect_redis(REDIS_URL)
        engine.name = f"old-style-{tag}"  # the limiter's key, so this test's keys are its own
        view = throttle_engine(engine, Limiter(redis), parse_rate("engine=1000/s+50"))
        try:
            return await run_case(_case(), view, run_id="old-signatures")
        finally:
            await redis.aclose()

    assert _scores(asyncio.run(throttled())) == _scores(baseline)
    next(keys, None)  # deletes the tagged keys


def test_served_by_memeval_serve(monkeypatch: pytest.MonkeyPatch, baseline: CaseResult) -> None:
    engine = old_style()
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", TOKEN)

    async def through_http(url: str) -> CaseResult:
        remote = create(f"http?url={url}&timeout=5&retries=2&backoff=0.01")
        try:
            return await run_case(_case(), remote, run_id="old-signatures")
        finally:
            await remote.close()

    with running(create_app(engine, SecretStr(TOKEN))) as url:
        result = asyncio.run(through_http(url))
    assert result.status is CaseStatus.done, result.error
    assert "start_session" in engine.called
    assert _scores(result) == _scores(baseline)
