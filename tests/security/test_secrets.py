"""`memeval.secrets`: what counts as a secret, that each way out masks it, and that ordinary
text (every built-in case) passes through untouched."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memeval.evaluation.jobs import CaseJob
from memeval.llm.failures import classify
from memeval.llm.spec import LlmSpec
from memeval.report.write import Format, render_as
from memeval.results import CaseResult, CaseStatus, Phase, ProbeResult, RunReport
from memeval.runner.context import RunOptions
from memeval.secrets import (
    MASK,
    install_masking,
    is_secret_var,
    redact,
    redact_data,
    redact_model,
    scrub_secrets,
    secret_values,
)
from memeval.store import PlannedCase, open_store
from memeval.suites.catalog import resolve
from tests.conftest import run_cli

KEY = "zq-7f3a9c0d5e11-SENTINEL"  # no known shape: only the environment says it is a key


@pytest.mark.parametrize(
    "name",
    [
        "OPENROUTER_API_KEY",
        "MEMEVAL_LLM_KEY",
        "MEMEVAL_HTTP_TOKEN",
        "CORTEX_API_KEY",
        "TINYHUMANS_API_KEY",
        "MEM0_API_KEY",
        "VERIFIEDSTATE_API_KEY",
        "MEMEVAL_FLOWER_BASIC_AUTH",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "PGPASSWORD",
        "my_service_apikey",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ],
)
def test_credential_variables_are_secret(name: str) -> None:
    assert is_secret_var(name)


@pytest.mark.parametrize("name", ["PWD", "OLDPWD", "MEMEVAL_KEY_PREFIX", "PATH", "HOME", "KEYMAP"])
def test_other_variables_are_not(name: str) -> None:
    assert not is_secret_var(name)


def test_short_values_are_not_masked_everywhere() -> None:
    assert secret_values({"A_TOKEN": "yes", "B_KEY": KEY, "HOME": "/home/someone"}) == (KEY,)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Authorization: Bearer abcdefgh123 was refused", "Authorization: "),
        ('{"authorization": "Basic dXNlcjpwYXNz"}', '{"authorization": "'),
        ("{'Authorization': 'Token abc123def'}", "{'Authorization': '"),
        ("GET /v1/x?api_key=abc123def456&page=2", "&page=2"),
        ("x-api-key: abc123def456", "x-api-key: "),
        ("bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "bearer "),
        ("sk-or-v1-0123456789abcdef0123 expired", " expired"),
        ("postgresql://memeval:hunter2hunter@db:5432/runs", "postgresql://memeval:"),
        ("redis://:s3cretpass@10.0.0.5:6379/0", "@10.0.0.5:6379/0"),
    ],
)
def test_credential_shapes_are_masked(text: str, kept: str) -> None:
    masked = redact(text)
    assert MASK in masked and kept in masked, masked
    secret = text.replace(kept, "")
    assert all(part not in masked for part in secret.split() if len(part) > 8), masked


def test_environment_keys_are_masked_in_any_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_API_KEY", KEY)
    assert redact(f"rate limited for {KEY}!") == f"rate limited for {MASK}!"
    data = {"error": {"message": f"bad {KEY}", "list": [KEY, 3]}, KEY: True}
    assert KEY not in json.dumps(redact_data(data))
    monkeypatch.delenv("MEM0_API_KEY")
    assert redact(f"rate limited for {KEY}!") == f"rate limited for {KEY}!"


def test_ordinary_text_is_left_alone() -> None:
    """No built-in case changes: masking must not eat the words memory is tested on."""
    for located in resolve("all").cases:
        dumped = located.case.model_dump(mode="json")
        assert redact_data(dumped) == dumped, located.path


def _result(error: str | None = None, pack: str = "- the port is 8443") -> CaseResult:
    probe = ProbeResult(
        probe="p", phase=Phase.recall, via="ask", style="lexical", scored=True,
        question="Which port?", expect=["8443"], pack=pack,
    )  # fmt: skip
    return CaseResult(
        run_id="r-secrets", case_id="c", kind="scenario", engine="e", tenant="t",
        status=CaseStatus.error if error else CaseStatus.done, error=error, probes=[probe],
        started_at=datetime(2026, 1, 1, tzinfo=UTC), finished_at=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip


def test_a_clean_model_is_returned_as_is_and_a_dirty_one_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CORTEX_API_KEY", 'k"ey\\with-quote')
    clean = _result()
    assert redact_model(clean) is clean
    dirty = _result(error='answerer: 401 (key k"ey\\with-quote)', pack="Bearer abcdef12345")
    masked = redact_model(dirty)
    assert masked.error == f"answerer: 401 (key {MASK})"
    assert masked.probes[0].pack == f"Bearer {MASK}"
    assert masked.probes[0].expect == ["8443"]


def test_the_store_never_holds_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    db = tmp_path / "runs.db"
    store = open_store(f"sqlite:///{db}")
    store.create_run(
        run_id="r-secrets", label="l", engine="e", suite="s",
        planned=[PlannedCase(case_id="c", trial=0, kind="scenario")],
        options={"base_url": f"https://u:{KEY}@host/v1", "note": f"Bearer {KEY}"},
    )  # fmt: skip
    assert store.upsert_case_result(_result(error=f"the service said: {KEY}", pack=KEY))
    (stored,) = store.case_results("r-secrets")
    assert stored.error == f"the service said: {MASK}" and stored.probes[0].pack == MASK
    store.dispose()
    files = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"the service said" in files and KEY.encode() not in files


def test_reports_in_every_format_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINYHUMANS_API_KEY", KEY)
    report = RunReport(
        run_id="r", label=f"label {KEY}", engine="e", suite="s",
        started_at=datetime(2026, 1, 1, tzinfo=UTC), cases=[_result(error=f"echo {KEY}")],
    )  # fmt: skip
    for fmt in Format:
        text = render_as(report, fmt)
        assert KEY not in text and MASK in text, fmt


def test_log_records_and_tracebacks_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIFIEDSTATE_API_KEY", KEY)
    install_masking()
    install_masking()  # twice is harmless
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    log = logging.getLogger("tests.security.masking")
    log.addHandler(handler)
    try:
        log.warning("calling with %s and %r", KEY, {"Authorization": "Bearer abcdefgh12"})
        try:
            raise RuntimeError(f"the service echoed {KEY}")
        except RuntimeError:
            log.exception("failed")
        log.warning("stack", stack_info=True, extra={"unrelated": 1})
    finally:
        log.removeHandler(handler)
    written = stream.getvalue()
    assert "RuntimeError: the service echoed ***" in written
    assert KEY not in written and "abcdefgh12" not in written


def test_an_uncaught_traceback_is_masked() -> None:
    code = (
        "import os; from memeval.secrets import install_masking; install_masking(); "
        "raise RuntimeError('echo ' + os.environ['CORTEX_API_KEY'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"CORTEX_API_KEY": KEY, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "RuntimeError: echo ***" in done.stderr
    assert KEY not in done.stderr


def test_cli_errors_are_masked(tmp_path: Path) -> None:
    """A path is echoed in its error message: one holding the key must print masked."""
    done = run_cli("suites", "validate", str(tmp_path / KEY), env={"MEMEVAL_HTTP_TOKEN": KEY})
    assert done.returncode == 2 and "no such file or folder" in done.stderr
    assert KEY not in done.stdout + done.stderr


def test_model_error_bodies_are_masked_before_they_are_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    body = {"error": {"code": 429, "message": "x" * 290 + f" Bearer {KEY} " + KEY}}
    error = classify(429, body, 1.0, env_var="OPENROUTER_API_KEY")
    assert KEY[:4] not in error.message.split("x" * 290)[1], error.message


def test_task_reprs_are_masked_and_the_task_itself_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """Flower shows the reprs; the worker needs the real options (a URL's own credentials)."""
    url = f"https://team:{KEY}@models.example/v1"
    case = resolve("lifecycle").cases[0].case
    options = RunOptions(llm=LlmSpec(model="m", base_url=url))
    message = CaseJob(run_id="r", engine="e", case=case, trial=0, options=options).message()
    assert KEY not in message["argsrepr"] + message["kwargsrepr"]
    assert "team:***@models.example" in message["kwargsrepr"]
    assert message["kwargs"]["options"]["llm"]["base_url"] == url


def test_scrub_drops_credential_options_and_masks_the_rest() -> None:
    options = {"api_key": KEY, "url": f"redis://:{KEY}@h/0", "nested": [{"token": KEY, "n": 1}]}
    assert scrub_secrets(options) == {"url": f"redis://:{MASK}@h/0", "nested": [{"n": 1}]}


def test_a_formatter_reading_the_arguments_still_gets_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """uvicorn's access log unpacks a record's arguments: masking must leave them a tuple
    (it left None, and `memeval serve` printed a logging error for every request)."""
    from uvicorn.logging import AccessFormatter

    monkeypatch.setenv("VERIFIEDSTATE_API_KEY", KEY)
    install_masking()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(AccessFormatter('%(client_addr)s "%(request_line)s" %(status_code)s'))
    log = logging.getLogger("tests.security.access")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        for path in ("/v1/health", f"/v1/x?key={KEY}"):
            log.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", path, "1.1", 401)
    finally:
        log.removeHandler(handler)
    written = stream.getvalue()
    assert "Logging error" not in written and KEY not in written
    assert written.splitlines() == [
        '127.0.0.1:5 "GET /v1/health HTTP/1.1" 401 Unauthorized',
        '127.0.0.1:5 "GET /v1/x?key=*** HTTP/1.1" 401 Unauthorized',
    ]
