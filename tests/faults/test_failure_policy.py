"""The one failure policy: what an exception raised in a case means, in this process and on a
farm worker, with its retries left or spent. The callers' behaviour over real engines and
workers is tested where they run (tests/faults, tests/farm, tests/plugin); this pins the table
they share."""

from __future__ import annotations

import pytest

from memeval.errors import CreditsExhausted, EngineUnavailable
from memeval.results import CaseStatus
from memeval.runner.failures import IN_PROCESS, Action, Place, Verdict, judge


class RedisDown(Exception):
    """Stands for a farm's own fault type (`memeval_farm.shield.REDIS_FAULTS`)."""


class SoftLimit(Exception):
    """Stands for Celery's `SoftTimeLimitExceeded`."""


def farm(tries: int = 0) -> Place:
    return Place(
        farm=True,
        tries=tries,
        retries=2,
        infrastructure=(RedisDown,),
        timeouts=(SoftLimit,),
        case_timeout=30.0,
    )


def test_in_this_process_an_engine_down_or_out_of_credit_stops_the_run() -> None:
    for exc in (EngineUnavailable("refused"), CreditsExhausted("402"), RedisDown("x")):
        expected = Action.record if isinstance(exc, RedisDown) else Action.stop
        assert judge(exc).action is expected
    # No case timeout here: a TimeoutError is the case's own crash, named as such.
    assert judge(TimeoutError("slow"), IN_PROCESS) == Verdict(
        action=Action.record, reason="TimeoutError: slow", crashed=True
    )


def test_on_a_farm_infrastructure_is_retried_until_the_retries_are_spent() -> None:
    for exc in (EngineUnavailable("refused"), RedisDown("timeout")):
        assert judge(exc, farm(tries=1)).action is Action.retry
    assert judge(EngineUnavailable("refused"), farm(tries=2)) == Verdict(
        action=Action.record, reason="engine unavailable after 3 attempts: refused"
    )
    assert judge(RedisDown("timeout"), farm(tries=2)).reason == (
        "the farm's Redis failed after 3 attempts: timeout"
    )


def test_on_a_farm_spent_credits_halt_the_run_and_skip_the_case() -> None:
    assert judge(CreditsExhausted("402: top up"), farm()) == Verdict(
        action=Action.halt, status=CaseStatus.skipped_credits, reason="402: top up"
    )


@pytest.mark.parametrize("exc", [TimeoutError(), SoftLimit()])
def test_on_a_farm_a_case_past_its_timeout_is_an_error_naming_it(exc: Exception) -> None:
    assert judge(exc, farm()) == Verdict(
        action=Action.record, reason="the case did not finish within 30s"
    )


def test_anything_else_is_the_cases_error_with_its_secrets_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-abcdefghijklmnop")
    for place in (IN_PROCESS, farm()):
        verdict = judge(RuntimeError("boom with sk-or-v1-abcdefghijklmnop"), place)
        assert verdict.action is Action.record and verdict.crashed
        assert verdict.status is CaseStatus.error
        assert verdict.reason.startswith("RuntimeError: boom with ")
        assert "abcdefghijklmnop" not in verdict.reason
