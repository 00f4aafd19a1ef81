"""A refused or malformed answer is never a score: the case is an error naming engine, route,
status and the vendor's code, and the same refusal on a run's first cases stops the run with
exit 2. Before, a recall refused on every case finished the run with exit 0 and 0.0%."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import redis

from memeval.results import CaseResult, CaseStatus
from memeval.runner.refusals import NOT_RUN, FirstCases, signature, stopped
from memeval_farm.halt import Halts
from tests.adapters.conftest import FAST, engine_at
from tests.adapters.fake_cortex import KEY, FakeCortex
from tests.adapters.fakes import Fault, running
from tests.adapters.history import run_conversation, write_sample
from tests.conftest import run_cli

REFUSED_RECALL = {"/v1/recall": (422, "FILTER_UNSUPPORTED")}


def test_a_refused_recall_is_an_error_of_the_case_not_a_zero(cortex_url, cortex, tmp_path):
    cortex.refused.update(REFUSED_RECALL)
    result = run_conversation(engine_at("cortex", cortex_url, "enrich_wait=0"), tmp_path)
    assert result.status is CaseStatus.error and result.score is None
    assert signature(result) == "cortex POST 422 FILTER_UNSUPPORTED"
    assert "POST /v1/recall answered 422 FILTER_UNSUPPORTED" in (result.error or "")


def test_a_reply_that_does_not_parse_is_an_error_of_the_case(cortex_url, cortex, tmp_path):
    cortex.wire.inject(
        Fault(200, body={"layers": ["not", "what", "the", "reference", "shows"]}, path="recall")
    )
    result = run_conversation(engine_at("cortex", cortex_url, "enrich_wait=0"), tmp_path)
    assert result.status is CaseStatus.error and result.score is None
    assert "cortex answered an unexpected Pack" in (result.error or "")


def case(error: str | None, status: CaseStatus = CaseStatus.error) -> CaseResult:
    return CaseResult(
        run_id="r",
        case_id="c",
        trial=0,
        kind="scenario",
        engine="cortex",
        tenant="t",
        status=status,
        error=error,
    )


REFUSAL = "refused: cortex POST 403 CAPABILITY_REQUIRED: cortex: POST /v1/recall answered 403"


def test_the_first_cases_refused_alike_stop_the_run_and_one_answer_disarms_it():
    first = FirstCases(3)
    assert first.land(case(REFUSAL)) is None and first.land(case(REFUSAL)) is None
    stop = first.land(case(REFUSAL))
    assert stop is not None and stop.exit_code == 2 and "cortex" in stop.message
    assert "CAPABILITY_REQUIRED" in stop.message
    mixed = FirstCases(3)
    for result in (case(REFUSAL), case(None, CaseStatus.done), case(REFUSAL), case(REFUSAL)):
        assert mixed.land(result) is None
    assert FirstCases(0).land(case(REFUSAL)) is None  # 0: the rule is off


def test_the_farm_counts_the_first_cases_across_workers_in_redis():
    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    halts, run_id = Halts(f"test-{uuid.uuid4().hex[:8]}:"), "run-refused"
    sig = "cortex POST 403 CAPABILITY_REQUIRED"
    try:
        assert halts.land(client, run_id, sig, 3) is None
        assert Halts(halts.prefix).land(client, run_id, sig, 3) is None  # another worker
        assert halts.land(client, run_id, sig, 3) == 3
        assert halts.land(client, run_id, sig, 3) is None  # counted once, then done
        assert halts.land(client, "run-mixed", None, 2) is None
        assert halts.land(client, "run-mixed", sig, 2) is None
    finally:
        for key in client.scan_iter(f"{halts.prefix}*"):
            client.delete(key)
    skipped = case(f"{NOT_RUN} (cortex, 3 cases), so the run stopped: {REFUSAL}")
    stop = stopped([case(REFUSAL), skipped])
    assert stop is not None and stop.exit_code == 2 and "CAPABILITY_REQUIRED" in stop.message
    assert stopped([case(REFUSAL), case(None, CaseStatus.done)]) is None


@pytest.mark.parametrize(
    "where", [("--in-process", "--workers", "1"), ("--pool", "threads", "--workers", "1")]
)
def test_memeval_run_stops_with_exit_2_naming_the_engine(tmp_path: Path, where: tuple[str, ...]):
    """In process, and on the embedded farm (its workers flag the run in Redis)."""
    fake = FakeCortex(refused={"/v1/recall": (403, "CAPABILITY_REQUIRED")})
    suite = write_sample(tmp_path)
    with running(fake.app()) as url:
        engine = f"cortex?url={url}&enrich_wait=0&" + "&".join(f"{k}={v}" for k, v in FAST.items())
        done = run_cli(
            *("run", "--engine", engine, "--suite", f"locomo:{suite}", "--trials", "5"),
            *where,
            cwd=tmp_path,
            env={"CORTEX_API_KEY": KEY},
            timeout=240,
        )
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "refused the run's first cases alike (cortex, 3 cases)" in said
    assert "403 CAPABILITY_REQUIRED" in said and "Traceback" not in said
    assert len(fake.wire.calls("/v1/recall")) < 5  # the later cases were not sent to the wall


@pytest.mark.parametrize("limit", [0])
def test_the_stop_is_a_setting(limit: int):
    first = FirstCases(limit)
    assert all(first.land(case(REFUSAL)) is None for _ in range(5))
