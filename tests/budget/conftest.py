"""The budget tests share the model tests' fixtures: a fake OpenRouter and tagged Redis keys."""

from tests.llm.conftest import redis_url, server, tag

__all__ = ["redis_url", "server", "tag"]
