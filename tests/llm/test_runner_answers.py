"""run_case with an answerer: probes and fixture queries get graded model answers, spend is
recorded, a spent budget skips cases without touching the engine, and without an answerer
nothing changes."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime

from memeval.engines.types import Hit, QueryResult
from memeval.llm.grading import answerable_query, grade_query, hits_pack, query_question
from memeval.llm.pricing import Price
from memeval.llm.prompt import is_unknown
from memeval.llm.spec import LlmSpec
from memeval.results import CaseStatus
from memeval.runner import run_case
from memeval.suites.fixture import Fixture, Query
from memeval.suites.scenario import Scenario
from memeval_farm.budget import Budget, connect_redis
from memeval_farm.redis_state import open_answerer
from tests.llm.fakes import WordEngine
from tests.llm.server import Fault, hard_402

PRICE = Price(prompt=1 / 1_000_000, completion=2 / 1_000_000)

FIXTURE = Fixture.model_validate(
    {
        "dimension": "temporal",
        "name": "port_after_move",
        "title": "Port after a move",
        "tests": "current_value",
        "assertions": [
            {"id": "a1", "text": "The billing service listens on port 8443.", "source": "ops"},
            {"id": "a2", "text": "The audit log is kept for 90 days.", "source": "policy"},
        ],
        "queries": [
            {
                "text": "Which port does the billing service listen on?",
                "checks": [{"contains": "8443"}, {"not_contains": "8080"}],
            },
            {"text": "What is the parking fee?", "checks": [{"abstain": True}]},
            {"text": "Where does the audit log come from?", "checks": [{"source": "policy"}]},
        ],
    }
)

SCENARIO = Scenario.model_validate(
    {
        "name": "port_memory",
        "title": "Remembers a port",
        "start": date(2025, 1, 6),
        "documents": [
            {"id": "d1", "title": "Billing", "text": "The billing service listens on port 8443."}
        ],
        "probes": [
            {
                "id": "p1",
                "question": "Which port does the billing service listen on?",
                "style": "lexical",
                "expect": ["8443"],
            },
            {
                "id": "leak",
                "question": "Tell me about billing",
                "style": "lexical",
                "scored": False,
                "forbidden": ["password"],
            },
        ],
    }
)


def spec(server, **changes) -> LlmSpec:
    return LlmSpec(model="test/cheap", base_url=server.base_url, price=PRICE).model_copy(
        update=changes
    )


def run(case, engine, the_spec=None, redis_url=None):
    async def go():
        if the_spec is None:
            return await run_case(case, engine, run_id="r1")
        async with open_answerer(the_spec, redis_url=redis_url) as answerer:
            return await run_case(case, engine, run_id="r1", answerer=answerer)

    return asyncio.run(go())


def test_fixture_queries_get_graded_model_answers(server):
    result = run(FIXTURE, WordEngine(), spec(server))
    port, parking, source = result.queries
    assert port.model_answer == "The billing service listens on port 8443. (source: ops)"
    assert port.model_ok
    assert is_unknown(parking.model_answer) and parking.model_ok
    assert source.model_answer is None and source.model_ok is None  # no check grades text
    assert len(server.calls) == 2
    assert (
        result.answerer_usd_micros
        == server.billed_micros
        == sum(q.model_usd_micros for q in result.queries)
    )
    assert port.model_tokens > 0
    assert any(t.step == "answer" and t.call == "answer" for t in result.timings)
    assert result.status is CaseStatus.done


def test_scenario_probes_get_graded_model_answers_twice(server):
    result = run(SCENARIO, WordEngine(), spec(server))
    scored = [p for p in result.probes if p.scored]
    assert [p.phase.value for p in scored] == ["recall", "synthesis"]
    assert all(p.model_answer and "8443" in p.model_answer and p.model_ok for p in scored)
    leak = [p for p in result.probes if not p.scored]
    assert all(p.model_answer is None and p.model_ok is None for p in leak)
    assert result.answerer_usd_micros == server.billed_micros and len(server.calls) == 2
    assert not any(t.step == "probe" and t.call == "answer" for t in result.timings)


def test_without_an_answerer_nothing_changes(server):
    plain = run(FIXTURE, WordEngine())
    answered = run(FIXTURE, WordEngine(), spec(server))
    assert plain.score == answered.score
    assert [c.model_dump() for c in plain.checks] == [c.model_dump() for c in answered.checks]
    assert all(q.model_answer is None and q.model_ok is None for q in plain.queries)
    assert plain.answerer_usd_micros == 0
    assert not any(t.step == "answer" for t in plain.timings)
    scenario = run(SCENARIO, WordEngine())
    assert all(p.model_answer is None and p.model_ok is None for p in scenario.probes)


def test_a_spent_budget_skips_the_case_without_the_engine(server, redis_url, tag):
    scope = f"run:{tag}"

    async def go():
        redis = await connect_redis(redis_url)
        budget = Budget(redis, [scope])
        await budget.open(scope, 1_000_000)
        await budget.close("exhausted")
        engine = WordEngine()
        async with open_answerer(spec(server, budget_scopes=[scope]), redis_url=redis_url) as a:
            result = await run_case(FIXTURE, engine, run_id="r1", answerer=a)
        await redis.aclose()
        return engine, result

    engine, result = asyncio.run(go())
    assert result.status is CaseStatus.skipped_budget
    assert not engine.calls and not server.calls and result.finished_at is not None


def test_a_budget_cut_mid_case_marks_it_skipped(server, redis_url, tag):
    scope = f"run:{tag}"

    async def go():
        redis = await connect_redis(redis_url)
        await Budget(redis, [scope]).open(scope, 1_000_000)
        server.inject(Fault(200), hard_402())  # the first answer lands, the second cannot pay
        async with open_answerer(spec(server, budget_scopes=[scope]), redis_url=redis_url) as a:
            result = await run_case(FIXTURE, WordEngine(), run_id="r1", answerer=a)
        await redis.aclose()
        return result

    result = asyncio.run(go())
    assert result.status is CaseStatus.skipped_budget
    assert result.queries[0].model_ok and result.queries[1].model_answer is None
    assert result.answerer_usd_micros == server.billed_micros > 0
    assert result.score is not None  # the memory was still scored


def test_an_answering_failure_marks_the_case_for_resume(server):
    server.inject(*[Fault(503, retry_after=0.01)] * 2)
    result = run(FIXTURE, WordEngine(), spec(server, max_attempts=2))
    assert result.status is CaseStatus.error
    assert result.error and result.error.startswith("answerer: gave up after 2 attempts")
    assert server.attempts == 2  # no further calls once the case cannot be complete


def test_grading_a_query_answer():
    port, parking, _ = FIXTURE.queries
    assert grade_query("It listens on port 8443.", port)
    assert not grade_query("Port 8443, formerly 8080.", port)
    assert not grade_query("unknown", port) and not grade_query(None, port)
    assert grade_query("Unknown.", parking) and not grade_query("It is 5 dollars.", parking)
    assert [answerable_query(q) for q in FIXTURE.queries] == [True, True, False]
    dated = Query(text="Who was CFO?", as_of=datetime(2024, 3, 1, tzinfo=UTC), checks=port.checks)
    assert query_question(dated) == "Who was CFO? (answer as of 2024-03-01)"


def test_hits_pack_carries_dates_and_sources():
    pack = hits_pack(
        QueryResult(
            hits=[
                Hit(
                    text="Ana is CFO.",
                    source="hr",
                    valid_from=datetime(2024, 1, 1, tzinfo=UTC),
                    valid_to=datetime(2024, 6, 30, tzinfo=UTC),
                ),
                Hit(text="Bo  is\nCTO."),
            ]
        )
    )
    assert "- Ana is CFO. (valid from 2024-01-01; until 2024-06-30; source: hr)" in pack
    assert "- Bo is CTO.\n" in pack


def test_unknown_must_be_clear():
    assert is_unknown("unknown") and is_unknown(" Unknown. ") and is_unknown('"unknown"')
    assert not is_unknown("It is unknown whether") and not is_unknown(None)
