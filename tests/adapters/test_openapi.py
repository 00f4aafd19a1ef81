"""The served protocol against its own OpenAPI document, fuzzed by schemathesis: every route
answers only statuses it declares, in the shapes it declares, never a server error, and none
of them works without the token. Example counts stay small so this runs in seconds.

The schema is loaded when a test runs (`schemathesis.pytest.from_fixture`), one route per test:
`schema.parametrize()` built every route's coverage cases while collecting, about a second of
CPU that each xdist worker paid whether or not it ran these tests. Each route now also sends its
path's undeclared methods, which `schema.parametrize()` sent once per path."""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar

import pytest
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
# Each operation of the document, as schemathesis labels it: FastAPI builds the document here
# and serves this one.
ROUTES = [
    f"{method.upper()} {path}" for path, item in app.openapi()["paths"].items() for method in item
]
ROUTE: ContextVar[str] = ContextVar("ROUTE")


@pytest.fixture(scope="module")
def served_schema() -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_asgi("/openapi.json", app)


@pytest.fixture(params=ROUTES)
def route(request: pytest.FixtureRequest) -> Iterator[None]:
    """The operation this test fuzzes: the lazy schema below keeps only it."""
    # schemathesis 4.32's lazy schemas read `Item._nodeid`, which pytest 9.2 no longer has.
    request.node._nodeid = request.node.nodeid
    token = ROUTE.set(request.param)
    yield
    ROUTE.reset(token)


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
schema = schemathesis.pytest.from_fixture("served_schema").include(
    lambda ctx: ctx.operation.label == ROUTE.get()
)


@schema.parametrize()
@pytest.mark.usefixtures("route")
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_every_route_keeps_its_contract(case):
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"}, checks=CHECKS)


def test_the_document_declares_bearer_auth_and_tenant_routes(served_schema):
    document = served_schema.raw_schema
    assert document["info"]["version"] == p.VERSION
    schemes = document["components"]["securitySchemes"]
    assert any(s.get("scheme") == "bearer" for s in schemes.values())
    memory_routes = [path for path in document["paths"] if path not in (p.ENGINE, p.USAGE)]
    assert memory_routes and all(path.startswith("/v1/tenants/{tenant}/") for path in memory_routes)
