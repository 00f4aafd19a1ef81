"""`memeval estimate`: calls, tokens and dollars per model, before anything is spent."""

from __future__ import annotations

from memeval.evaluation.planning import select
from memeval.llm.estimate import EXPECTED_COMPLETION_TOKENS, estimate, planned_calls
from memeval.llm.grading import answerable_query
from memeval.llm.pricing import parse_price
from memeval.suites.catalog import resolve
from tests.cli_here import run_cli_here

WIDE = {"COLUMNS": "200"}


def test_calls_follow_what_the_runner_answers():
    fixtures = select(resolve("dimensions"), [], [])
    calls = planned_calls(fixtures)
    assert len(calls) == sum(answerable_query(q) for f in fixtures for q in f.queries)
    scenarios = select(resolve("lifecycle"), [], [])
    scored = sum(p.scored for s in scenarios for p in s.probes)
    assert len(planned_calls(scenarios)) == 2 * scored  # recall and synthesis
    assert all(0 < c.prompt_tokens <= 1500 + 400 for c in planned_calls(scenarios))


def test_dollars_per_model():
    _, price = parse_price("m=1/2")  # USD per million tokens
    calls = planned_calls(select(resolve("dimensions"), [], []))
    [row] = estimate(calls, trials=3, prices={"m": price}, max_tokens=100)
    assert row.calls == 3 * len(calls)
    assert row.completion_tokens_expected == row.calls * EXPECTED_COMPLETION_TOKENS
    assert row.completion_tokens_max == row.calls * 100
    assert row.usd_expected == price.micros(row.prompt_tokens, row.completion_tokens_expected) / 1e6
    assert row.usd_max > row.usd_expected
    [unpriced] = estimate(calls, trials=1, prices={"x": None}, max_tokens=100)
    assert unpriced.usd_expected is None


def test_estimate_command_prints_per_model_figures(server):
    result = run_cli_here(
        "estimate",
        "--models",
        "test/cheap,test/dear",
        "--base-url",
        server.base_url,
        "--suite",
        "dimensions",
        "--trials",
        "2",
        "--budget-usd",
        "0.01",
        env=WIDE,
    )
    assert result.returncode == 0, result.stderr
    for text in ("test/cheap", "test/dear", "calls", "covers about", "$1/$2 per M"):
        assert text in result.stdout, result.stdout
    assert not server.calls, "an estimate must not call the model"


def test_estimate_command_errors(server):
    unknown = run_cli_here("estimate", "--models", "test/nope", "--base-url", server.base_url)
    assert unknown.returncode == 2 and "not in the service's model list" in unknown.stderr
    zero = run_cli_here("estimate", "--models", "test/cheap", "--budget-usd", "0")
    assert zero.returncode == 2 and "must be positive" in zero.stderr
    offline = run_cli_here(
        "estimate", "--models", "llama3", "--base-url", "http://127.0.0.1:1/v1", env=WIDE
    )
    assert offline.returncode == 0 and "unpriced" in offline.stdout
    priced = run_cli_here(
        "estimate",
        "--models",
        "llama3",
        "--base-url",
        "http://127.0.0.1:1/v1",
        "--price",
        "llama3=0.1/0.2",
        env=WIDE,
    )
    assert priced.returncode == 0 and "$0.1/$0.2 per M" in priced.stdout
