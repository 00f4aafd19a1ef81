"""memeval's REST memory protocol, version 1: the paths and bodies that the server in
`memeval.server` answers and the `http` engine sends, so the two cannot drift apart.

Every memory route sits under `/v1/tenants/{tenant}/`, and every request carries
`Authorization: Bearer <token>`. Bodies are the engine boundary's own pydantic models
(`memeval.engines.types`), so the OpenAPI document the server publishes is the contract.

| engine call             | route                                                    |
| ----------------------- | -------------------------------------------------------- |
| (capabilities)          | GET    /v1/engine                                        |
| usage                   | GET    /v1/usage                                         |
| store                   | POST   /v1/tenants/{tenant}/assertions                   |
| query, query_at         | POST   /v1/tenants/{tenant}/query  (`as_of` for query_at)|
| conflicts               | GET    /v1/tenants/{tenant}/assertions/{id}/conflicts    |
| reset                   | DELETE /v1/tenants/{tenant}/assertions                   |
| ingest                  | POST   /v1/tenants/{tenant}/memories                     |
| list                    | GET    /v1/tenants/{tenant}/memories                     |
| forget                  | DELETE /v1/tenants/{tenant}/memories                     |
| forget_write            | DELETE /v1/tenants/{tenant}/memories/{write_id}          |
| pre_turn, post_turn     | POST   /v1/tenants/{tenant}/turns/pre, .../turns/post    |
| start_session           | POST   /v1/tenants/{tenant}/sessions                     |
| recall_for_compaction   | POST   /v1/tenants/{tenant}/compaction                   |
| compile_context         | POST   /v1/tenants/{tenant}/context                      |
| build_beliefs           | POST   /v1/tenants/{tenant}/beliefs/build                |
| inspect                 | GET    /v1/tenants/{tenant}/derived                      |

A call the engine does not support answers 501 with `{"detail": ..., "capability": ...}`;
a missing or wrong token answers 401; an engine that is down answers 503.

Every call made inside a case carries the case's evaluation time in `X-Memeval-Now` (ISO
8601), and the server pins its engine's clock (`memeval.clock`) to it for that request, so an
engine in another process reads the same "now" as an embedded one.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import quote

from pydantic import Field

from memeval.engines.types import Capability, Model, Turn

VERSION = "1"
PREFIX = "/v1"
NOW_HEADER = "X-Memeval-Now"
"""The case's evaluation time, sent with every call made inside a case; optional."""
TENANT_PATTERN = r"^[A-Za-z0-9._-]{1,200}$"

ENGINE = f"{PREFIX}/engine"
USAGE = f"{PREFIX}/usage"
TENANT = f"{PREFIX}/tenants/{{tenant}}"
ASSERTIONS = "/assertions"
QUERY = "/query"
CONFLICTS = "/assertions/{assertion_id}/conflicts"
MEMORIES = "/memories"
MEMORY = "/memories/{write_id}"
PRE_TURN = "/turns/pre"
POST_TURN = "/turns/post"
SESSIONS = "/sessions"
COMPACTION = "/compaction"
CONTEXT = "/context"
BELIEFS_BUILD = "/beliefs/build"
DERIVED = "/derived"


def tenant_path(tenant: str, route: str, **params: str) -> str:
    """A route under one tenant, every path parameter escaped."""
    filled = route.format(**{k: quote(v, safe="") for k, v in params.items()})
    return TENANT.format(tenant=quote(tenant, safe="")) + filled


class EngineInfo(Model):
    name: str
    protocol: str = VERSION
    capabilities: list[Capability] = Field(default_factory=list)


class QueryRequest(Model):
    text: str
    k: int = Field(default=5, ge=1, le=100)
    as_of: datetime | None = Field(default=None, description="Set for a point-in-time query.")


class WriteAck(Model):
    id: str = Field(description="The id `list` shows once the write is visible.")


class Listing(Model):
    ids: list[str] = Field(default_factory=list)


class PostTurnRequest(Model):
    agent: str
    thread: str
    turn: Turn


class SessionRequest(Model):
    agent: str
    thread: str | None = None
    focus: str | None = None
    at: datetime
    question: str | None = None


class CompactionRequest(Model):
    agent: str
    thread: str
    dropped: list[Turn] = Field(default_factory=list)


class ContextRequest(Model):
    agent: str
    heading: str
    at: datetime
    question: str | None = None


class Problem(Model):
    detail: str
    capability: Capability | None = None
