from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm.redis_support import REDIS_URL, tagged_keys
from tests.llm.server import KEY, FakeOpenRouter


@pytest.fixture
def tag() -> Iterator[str]:
    yield from tagged_keys()


@pytest.fixture
def redis_url() -> str:
    return REDIS_URL


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path) -> Iterator[FakeOpenRouter]:
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    monkeypatch.delenv("MEMEVAL_LLM_KEY", raising=False)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with FakeOpenRouter() as fake:
        yield fake
