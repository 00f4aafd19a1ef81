"""The security tests run the farm for real, with the farm tests' fixtures (a private store, a
namespace of their own on the machine's Redis)."""

from tests.farm.conftest import farm, namespace, redis_url, shared

__all__ = ["farm", "namespace", "redis_url", "shared"]
