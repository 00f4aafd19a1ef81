"""The key must never show: not in logs, exceptions, reprs, results or task options.

A sentinel key is used on every path that could leak it, successes and failures alike, with all
logging at DEBUG (httpx and httpcore included), and every artefact is searched for it.
"""

from __future__ import annotations

import asyncio
import logging
import traceback

import pytest

from memeval.llm.client import LlmClient
from memeval.llm.pricing import Price
from memeval.llm.spec import LlmSpec
from memeval.runner import RunOptions, run_case
from memeval_farm.budget import Budget, connect_redis
from memeval_farm.redis_state import open_answerer
from tests.conftest import run_cli
from tests.llm.fakes import WordEngine
from tests.llm.server import FakeOpenRouter, Fault, hard_402, in_flight
from tests.llm.test_runner_answers import FIXTURE

SENTINEL = "sk-or-v1-SENTINEL-7f3a9c0d5e"


def test_the_key_never_leaks(monkeypatch, caplog, capsys, tmp_path, redis_url, tag):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENROUTER_API_KEY", SENTINEL)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path))
    seen: list[str] = []
    scope = f"run:{tag}"

    def keep(*things: object) -> None:
        for thing in things:
            seen.append(str(thing))
            seen.append(repr(thing))
            if isinstance(thing, BaseException):
                seen.append("".join(traceback.format_exception(thing)))
                seen.append(getattr(thing, "render", lambda: "")())

    async def go(fake: FakeOpenRouter) -> None:
        redis = await connect_redis(redis_url)
        await Budget(redis, [scope]).open(scope, 10_000_000)
        price = Price(prompt=1 / 1_000_000, completion=2 / 1_000_000)
        spec = LlmSpec(
            model="test/cheap",
            base_url=fake.base_url,
            price=price,
            budget_scopes=[scope],
            max_attempts=2,
            timeout_s=0.3,
        )
        keep(spec, spec.model_dump_json(), RunOptions(llm=spec).model_dump_json())
        fake.inject(Fault(429, retry_after=0.01), Fault(200, error200=True), Fault(200, delay=1))
        fake.inject(in_flight(0.01), Fault(400), Fault(503))
        async with open_answerer(spec, redis_url=redis_url) as answerer:
            keep(answerer, answerer.client, answerer.budget)
            for _ in range(4):
                keep((await answerer.answer("Which port?", "- port 8443")).model_dump_json())
            result = await run_case(FIXTURE, WordEngine(), run_id="r1", answerer=answerer)
            keep(result.model_dump_json())
            fake.inject(hard_402())
            keep((await answerer.answer("Which port?", "- port 8443")).model_dump_json())
        client = LlmClient(fake.base_url)
        keep(client, await client.key_info(), await client.models())
        fake.key = "something-else"  # now the key is refused
        for call in (client.key_info(), client.chat("test/cheap", [], max_tokens=5)):
            try:
                await call
            except Exception as exc:  # every failure is searched
                keep(exc)
        await client.aclose()
        unreachable = LlmClient("http://127.0.0.1:1/api/v1")
        try:
            await unreachable.chat("m", [], max_tokens=1)
        except Exception as exc:
            keep(exc)
        await unreachable.aclose()
        await redis.aclose()

    with FakeOpenRouter(key=SENTINEL) as fake:
        asyncio.run(go(fake))
        assert fake.calls and all(c.authorization == f"Bearer {SENTINEL}" for c in fake.calls)
        cli = run_cli(
            "estimate",
            "--models",
            "test/cheap,test/nope",
            "--base-url",
            fake.base_url,
            "--suite",
            "dimensions",
            env={"OPENROUTER_API_KEY": SENTINEL, "MEMEVAL_CACHE_DIR": str(tmp_path)},
            cwd=tmp_path,
        )
        keep(cli.stdout, cli.stderr)
        fake.key = "something-else"
        refused = run_cli(
            "sweep",
            "--models",
            "test/cheap",
            "--budget-usd",
            "1",
            "--base-url",
            fake.base_url,
            env={"OPENROUTER_API_KEY": SENTINEL, "MEMEVAL_CACHE_DIR": str(tmp_path)},
            cwd=tmp_path,
        )
        keep(refused.stdout, refused.stderr)
        assert refused.returncode == 2 and "OPENROUTER_API_KEY" in refused.stderr

    captured = capsys.readouterr()
    logs = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP Request" in logs or "POST" in logs, "httpx logging was not captured"
    for where, text in [("logs", logs), ("output", captured.out + captured.err)] + [
        ("artefact", s) for s in seen
    ]:
        assert SENTINEL not in text, f"the key leaked into {where}: {text[:300]}"


@pytest.mark.parametrize("var", ["OPENROUTER_API_KEY", "MEMEVAL_LLM_KEY"])
def test_either_variable_supplies_the_key(monkeypatch, var):
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    monkeypatch.delenv("MEMEVAL_LLM_KEY", raising=False)
    monkeypatch.setenv(var, SENTINEL)
    with FakeOpenRouter(key=SENTINEL) as fake:

        async def go():
            client = LlmClient(fake.base_url)
            try:
                return await client.key_info()
            finally:
                await client.aclose()

        assert asyncio.run(go()) is not None
