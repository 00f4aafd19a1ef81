"""The `http` engine against `memeval serve`'s app: the protocol carries every call, and a
served reference engine scores exactly as the embedded one."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memeval.engines.adapters.http import HttpEngine
from memeval.engines.naive import NaiveEngine
from memeval.engines.reference import ReferenceEngine
from memeval.engines.types import Capability, MemoryItem
from memeval.errors import Unsupported
from memeval.results import CaseResult
from memeval.runner import run_case
from memeval.suites.catalog import resolve
from memeval.suites.fixture import Assertion
from tests.adapters.conftest import engine_at, run, served

pytestmark = pytest.mark.usefixtures("http_env")


def test_capabilities_come_from_the_server(reference_url):
    engine = engine_at("http", reference_url)
    assert isinstance(engine, HttpEngine)
    assert engine.capabilities == frozenset()  # nothing is known before the first call

    async def connect() -> None:
        await engine.ready()
        await engine.close()

    run(connect())
    assert engine.capabilities == ReferenceEngine.capabilities
    assert engine.remote_name == "reference"


def test_a_missing_capability_is_unsupported_not_an_error(reference_url):
    engine = engine_at("http", reference_url)

    async def calls() -> None:
        with pytest.raises(Unsupported) as caught:
            await engine.usage()
        assert caught.value.capability is Capability.usage
        await engine.close()

    run(calls())


@pytest.fixture
def naive_url() -> Iterator[str]:
    yield from served(NaiveEngine())


def test_naive_served_declares_and_refuses_what_it_lacks(naive_url):
    engine = engine_at("http", naive_url)

    async def calls() -> None:
        await engine.store("t", Assertion(id="a", text="Ada runs ops.", source="hr"))
        assert (await engine.query("t", "who runs ops")).hits[0].text == "Ada runs ops."
        assert not engine.supports(Capability.query_at)
        with pytest.raises(Unsupported):
            await engine.query_at("t", "who", datetime.now(UTC))
        with pytest.raises(Unsupported):
            await engine.build_beliefs("t")
        await engine.close()

    run(calls())


def test_lifecycle_calls_round_trip(reference_url):
    engine = engine_at("http", reference_url)

    async def calls() -> None:
        item = MemoryItem(id="d1", title="Ops", text="Grace owns the on-call rota.")
        written = await engine.ingest("t1", item)
        assert written in await engine.list("t1")
        assert await engine.list("t2") == []
        pack = await engine.compile_context("t1", "a", "on-call rota", datetime.now(UTC))
        assert "Grace" in pack.markdown
        assert (await engine.build_beliefs("t1")).built >= 0
        await engine.forget("t1")
        assert await engine.list("t1") == []
        await engine.close()

    run(calls())


def _scores(results: list[CaseResult]) -> dict[str, object]:
    return {
        f"{r.case_id}#{r.trial}": (
            r.status,
            r.score,
            [(c.kind, c.status) for c in r.checks],
            [(p.probe, p.phase, p.hit, p.leaked, p.pack_tokens) for p in r.probes],
            r.beliefs_built,
            r.error,
        )
        for r in results
    }


def test_served_reference_scores_as_the_embedded_one(reference_url):
    """The issue's acceptance check: every dimension fixture and every lifecycle scenario,
    through the protocol and in process, give identical results, probe by probe."""
    cases = [c.case for c in resolve("all").cases]
    assert len(cases) >= 60

    async def both() -> tuple[list[CaseResult], list[CaseResult]]:
        remote, local = engine_at("http", reference_url), ReferenceEngine()
        try:
            over_http = [await run_case(c, remote, run_id="eq") for c in cases]
            embedded = [await run_case(c, local, run_id="eq") for c in cases]
        finally:
            await remote.close()
        return over_http, embedded

    over_http, embedded = run(both())
    assert all(r.engine == "http" for r in over_http)
    assert _scores(over_http) == _scores(embedded)
    assert sum(r.score or 0 for r in embedded) > 0  # the comparison compared something
