"""The model tests' Redis fixtures (tagged keys, removed after each test)."""

from tests.llm.conftest import redis_url, tag

__all__ = ["redis_url", "tag"]
