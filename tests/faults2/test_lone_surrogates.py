"""Half of a UTF-16 pair (`\\ud83d`, what a JavaScript server sends when it cuts a string in the
middle of an emoji) is mended or refused where it comes in, never a crash further on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from memeval.engines.reference import ReferenceEngine
from memeval.server import create_app
from tests.adapters.fakes import running
from tests.cli_here import run_cli_here
from tests.conftest import run_cli

TOKEN = "surrogate-token"
WORD = b"Larkspur"
CUT = WORD + b" \\ud83d"  # the JSON escape of a high surrogate with no low one after it

CASE = """\
kind: scenario
name: cut-emoji
title: An engine cuts its answer in the middle of an emoji
start: 2026-08-03
documents:
  - id: memo
    title: Deal memo
    text: Acme intends to acquire Larkspur Analytics, a startup in Utrecht.
probes:
  - id: target
    question: Which company is Acme acquiring?
    style: lexical
    expect: [Larkspur]
"""


class CutsEmoji:
    """Wraps an app so that every answer naming `WORD` carries a lone surrogate after it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}

        async def rewrite(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            body = message.get("body", b"").replace(WORD, CUT)
            headers = [(k, v) for k, v in start["headers"] if k != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, rewrite)


@pytest.fixture
def cutting() -> Iterator[str]:
    with running(CutsEmoji(create_app(ReferenceEngine(), SecretStr(TOKEN)))) as url:
        yield url


def test_an_engine_answer_with_a_lone_surrogate_is_mended_in_process(
    cutting: str, tmp_path: Path
) -> None:
    (tmp_path / "case.yaml").write_text(CASE, encoding="utf-8")
    env = {
        "MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path}/s.db",
        "MEMEVAL_HTTP_URL": cutting,
        "MEMEVAL_HTTP_TOKEN": TOKEN,
    }
    done = run_cli(
        "run", "--in-process", "--engine", "http", "--suite", str(tmp_path / "case.yaml"),
        "--out", str(tmp_path / "out"), "--json", str(tmp_path / "r.json"), env=env, cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    (case,) = report["cases"]
    assert case["status"] == "done" and case["score"] == 1.0, case
    packs = [p["pack"] for p in case["probes"]]
    assert any("Larkspur \ufffd" in p for p in packs), packs  # the engine's escape, mended


def test_serve_mends_a_written_lone_surrogate_and_answers_later_packs() -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with (
        running(create_app(ReferenceEngine(), SecretStr(TOKEN))) as url,
        httpx.Client(base_url=url, headers=auth) as client,
    ):
        item = (
            b'{"id": "m1", "text": "Larkspur Analytics \\ud83d is the target", '
            b'"at": "2026-08-03T09:00:00Z"}'
        )
        wrote = client.post(
            "/v1/tenants/acme/memories",
            content=item,
            headers={"Content-Type": "application/json"},
        )
        assert wrote.status_code == 200, wrote.text
        for _ in range(2):  # every later pack, not only the first
            pack = client.post(
                "/v1/tenants/acme/sessions",
                json={"agent": "a", "thread": "t", "focus": "Larkspur target",
                      "at": "2026-08-03T10:00:00Z"},
            )  # fmt: skip
            assert pack.status_code == 200, pack.text
            assert "Larkspur Analytics \ufffd" in pack.text


def test_a_suite_file_with_a_lone_surrogate_is_refused(tmp_path: Path) -> None:
    """libyaml refuses the escape itself; this keeps it refused if the loader ever changes."""
    path = tmp_path / "cut.yaml"
    path.write_text(
        CASE.replace("in Utrecht.", 'in Utrecht \\ud83d"').replace("text: Acme", 'text: "Acme'),
        encoding="utf-8",
    )
    done = run_cli_here("suites", "validate", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cut.yaml:8" in done.stderr and "Unicode" in done.stderr, done.stderr
    assert "fix:" in done.stderr and "Traceback" not in done.stderr
