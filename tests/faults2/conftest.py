"""The farm tests' fixtures (a private store, a namespace of its own on the machine's Redis)
and the model tests' tagged Redis keys."""

from tests.farm.conftest import farm, namespace, redis_url, shared
from tests.llm.conftest import server, tag

__all__ = ["farm", "namespace", "redis_url", "server", "shared", "tag"]
