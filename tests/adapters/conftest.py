"""Fixtures: memeval's own server around an embedded engine, and the fakes, each on a port."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode

import pytest
from pydantic import SecretStr

from memeval.engines.base import Engine
from memeval.engines.reference import ReferenceEngine
from memeval.engines.registry import create
from memeval.server import create_app
from tests.adapters.fake_cortex import KEY, FakeCortex
from tests.adapters.fakes import running

TOKEN = "serve-token-for-tests"
FAST = {"timeout": "2", "retries": "3", "backoff": "0.01"}
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def served(engine: Engine) -> Iterator[str]:
    with running(create_app(engine, SecretStr(TOKEN))) as url:
        yield url


@pytest.fixture
def reference_url() -> Iterator[str]:
    yield from served(ReferenceEngine())


@pytest.fixture
def http_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", TOKEN)


@pytest.fixture
def cortex() -> FakeCortex:
    return FakeCortex()


@pytest.fixture
def cortex_url(cortex: FakeCortex, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("CORTEX_API_KEY", KEY)
    with running(cortex.app()) as url:
        yield url


def engine_at(name: str, url: str, extra: str = "") -> Engine:
    """`name` at `url` with quick retries; `extra` (a query string) overrides them."""
    options = {"url": url, **FAST, **dict(parse_qsl(extra))}
    return create(f"{name}?{urlencode(options)}")
