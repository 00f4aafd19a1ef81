"""The lifecycle-2 tests reach their small engines through the `http` adapter."""

from __future__ import annotations

import pytest

from tests.lifecycle2.engines import TOKEN


@pytest.fixture(autouse=True)
def http_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", TOKEN)
