"""The served protocol against its own OpenAPI document, fuzzed by schemathesis: every route
answers only statuses it declares, in the shapes it declares, never a server error, and none
of them works without the token. Example counts stay small so this runs in seconds."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from pydantic import SecretStr
from schemathesis.checks import (
    content_type_conformance,
    ignored_auth,
    response_schema_conformance,
    status_code_conformance,
)

from memeval.engines.adapters import protocol as p
from memeval.engines.reference import ReferenceEngine
from memeval.server import create_app
from tests.adapters.conftest import TOKEN

app = create_app(ReferenceEngine(), SecretStr(TOKEN))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schemathesis.check
def no_server_error(ctx, response, case) -> None:
    """Like schemathesis' own check, but 501 is the protocol's declared answer for a
    capability the engine lacks (the reference engine reports no usage), not a crash."""
    if response.status_code >= 500 and response.status_code != 501:
        raise AssertionError(f"{response.status_code}: {response.text[:300]}")


CHECKS = [
    no_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    ignored_auth,
]


@schema.parametrize()
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_every_route_keeps_its_contract(case):
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"}, checks=CHECKS)


def test_the_document_declares_bearer_auth_and_tenant_routes():
    document = schema.raw_schema
    assert document["info"]["version"] == p.VERSION
    schemes = document["components"]["securitySchemes"]
    assert any(s.get("scheme") == "bearer" for s in schemes.values())
    memory_routes = [path for path in document["paths"] if path not in (p.ENGINE, p.USAGE)]
    assert memory_routes and all(path.startswith("/v1/tenants/{tenant}/") for path in memory_routes)
