"""The protocol as a FastAPI app around one engine: what `memeval serve` runs.

Routes and bodies come from `memeval.engines.adapters.protocol`, so this server and the `http`
engine agree by construction. The token is compared in constant time, and the OpenAPI
document (at /openapi.json, readable without a token) declares the bearer scheme and every
status a route can answer, so a generated client or a schema fuzzer sees the whole contract.
Writes honour an `Idempotency-Key` (`memeval.server.replays`): a write retried after its
response was lost is stored once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Header, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import SecretStr
from starlette.exceptions import HTTPException

from memeval import clock
from memeval.engines import idempotency
from memeval.engines.adapters import protocol as p
from memeval.engines.base import Engine
from memeval.engines.types import (
    Assertion,
    BeliefReport,
    ConflictReport,
    Derived,
    MemoryItem,
    Pack,
    QueryResult,
    TurnContext,
    Usage,
)
from memeval.errors import EngineUnavailable, Unsupported
from memeval.server.gate import BODY_TIMEOUT_S, MAX_BODY_BYTES, Gate, token_matches
from memeval.server.latency import Latency
from memeval.server.replays import KeyReused, Replays

Tenant = Annotated[str, Path(pattern=p.TENANT_PATTERN, description="Whose memory; isolated.")]
AssertionId = Annotated[str, Path(pattern=p.TENANT_PATTERN)]
WriteId = Annotated[str, Path(min_length=1, max_length=400, description="The case's write id.")]
WriteKey = Annotated[
    str | None,
    Header(
        alias=idempotency.HEADER,
        max_length=400,
        description="Names this write: a repeat of the key gets the first answer, stored once.",
    ),
]
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": p.Problem, "description": "The body is not JSON."},
    401: {"model": p.Problem, "description": "Missing or wrong bearer token."},
    408: {"model": p.Problem, "description": "The body did not arrive in time."},
    409: {"model": p.Problem, "description": "The Idempotency-Key was sent with another body."},
    413: {"model": p.Problem, "description": "The body is larger than the server takes."},
    500: {"model": p.Problem, "description": "The engine failed on this call."},
    501: {"model": p.Problem, "description": "The engine lacks the capability."},
    503: {"model": p.Problem, "description": "The engine is down; retry later."},
}


class Unauthorized(Exception):
    pass


BEARER = HTTPBearer(auto_error=False, description="The token `memeval serve` was given.")


def create_app(
    engine: Engine,
    token: SecretStr,
    *,
    max_body: int = MAX_BODY_BYTES,
    body_timeout: float = BODY_TIMEOUT_S,
    latency_s: float = 0.0,
) -> FastAPI:
    """The app owns `engine` and closes it on shutdown, on the loop that used it. With
    `latency_s`, every request first waits that long, as at a remote service."""

    def authorize(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
    ) -> None:
        # The gate has already checked it; this dependency declares the scheme in OpenAPI and
        # guards an app mounted without the gate.
        given = f"Bearer {credentials.credentials}" if credentials else None
        if not token_matches(given, token):
            raise Unauthorized

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        await engine.close()

    app = FastAPI(
        lifespan=lifespan,
        title="memeval memory protocol",
        version=p.VERSION,
        description=(p.__doc__ or "").split("\n\n")[0],
    )
    router = APIRouter(
        dependencies=[Depends(authorize)], responses=ERRORS, route_class=_EngineRoute
    )
    _meta_routes(router, engine)
    replays = Replays()
    _fixture_routes(router, engine, replays)
    _lifecycle_routes(router, engine, replays)
    app.include_router(router)
    public = {url for url in (app.openapi_url, app.docs_url, app.redoc_url) if url}
    if app.docs_url and app.swagger_ui_oauth2_redirect_url:
        public.add(app.swagger_ui_oauth2_redirect_url)
    app.add_middleware(
        Gate,
        token=token,
        public=public,
        problem=_problem,
        max_body=max_body,
        body_timeout=body_timeout,
    )
    if latency_s > 0:  # outermost: every request waits, as on a remote service's network
        app.add_middleware(Latency, seconds=latency_s)
    return app


def _meta_routes(router: APIRouter, engine: Engine) -> None:
    @router.get(p.ENGINE, response_model=p.EngineInfo, tags=["meta"])
    async def info() -> p.EngineInfo:
        """What the served engine is and which capabilities it declares."""
        return p.EngineInfo(name=engine.name, capabilities=sorted(engine.capabilities))

    @router.get(p.USAGE, response_model=Usage, tags=["meta"])
    async def usage() -> Usage:
        return await engine.usage()


def _fixture_routes(router: APIRouter, engine: Engine, replays: Replays) -> None:
    @router.post(p.TENANT + p.ASSERTIONS, status_code=204, tags=["fixture"])
    async def store(tenant: Tenant, assertion: Assertion, key: WriteKey = None) -> Response:
        await replays.once(tenant, key, assertion, lambda: engine.store(tenant, assertion))
        return Response(status_code=204)

    @router.post(p.TENANT + p.QUERY, response_model=QueryResult, tags=["fixture"])
    async def query(tenant: Tenant, body: p.QueryRequest) -> QueryResult:
        if body.as_of is None:
            return await engine.query(tenant, body.text, body.k)
        return await engine.query_at(tenant, body.text, body.as_of, body.k)

    @router.get(p.TENANT + p.CONFLICTS, response_model=list[ConflictReport], tags=["fixture"])
    async def conflicts(tenant: Tenant, assertion_id: AssertionId) -> list[ConflictReport]:
        return await engine.conflicts(tenant, assertion_id)

    @router.delete(p.TENANT + p.ASSERTIONS, status_code=204, tags=["fixture"])
    async def reset(tenant: Tenant) -> Response:
        await engine.reset(tenant)
        replays.forget(tenant)
        return Response(status_code=204)


def _lifecycle_routes(router: APIRouter, engine: Engine, replays: Replays) -> None:
    @router.post(p.TENANT + p.MEMORIES, response_model=p.WriteAck, tags=["lifecycle"])
    async def ingest(tenant: Tenant, item: MemoryItem, key: WriteKey = None) -> p.WriteAck:
        return p.WriteAck(
            id=await replays.once(tenant, key, item, lambda: engine.ingest(tenant, item))
        )

    @router.get(p.TENANT + p.MEMORIES, response_model=p.Listing, tags=["lifecycle"])
    async def listing(tenant: Tenant) -> p.Listing:
        return p.Listing(ids=await engine.list(tenant))

    @router.delete(p.TENANT + p.MEMORIES, status_code=204, tags=["lifecycle"])
    async def forget(tenant: Tenant) -> Response:
        await engine.forget(tenant)
        replays.forget(tenant)
        return Response(status_code=204)

    @router.delete(p.TENANT + p.MEMORY, status_code=204, tags=["lifecycle"])
    async def forget_write(tenant: Tenant, write_id: WriteId) -> Response:
        await engine.forget_write(tenant, write_id)
        return Response(status_code=204)

    @router.post(p.TENANT + p.PRE_TURN, response_model=Pack, tags=["lifecycle"])
    async def pre_turn(tenant: Tenant, ctx: TurnContext, key: WriteKey = None) -> Pack:
        return await replays.once(tenant, key, ctx, lambda: engine.pre_turn(tenant, ctx))

    @router.post(p.TENANT + p.POST_TURN, response_model=p.WriteAck, tags=["lifecycle"])
    async def post_turn(
        tenant: Tenant, body: p.PostTurnRequest, key: WriteKey = None
    ) -> p.WriteAck:
        def write() -> Awaitable[str]:
            return engine.post_turn(tenant, body.agent, body.thread, body.turn)

        return p.WriteAck(id=await replays.once(tenant, key, body, write))

    @router.post(p.TENANT + p.SESSIONS, response_model=Pack, tags=["lifecycle"])
    async def start_session(tenant: Tenant, body: p.SessionRequest) -> Pack:
        return await engine.start_session(
            tenant, body.agent, body.thread, body.focus, body.at, question=body.question
        )

    @router.post(p.TENANT + p.COMPACTION, response_model=Pack, tags=["lifecycle"])
    async def compaction(tenant: Tenant, body: p.CompactionRequest) -> Pack:
        return await engine.recall_for_compaction(tenant, body.agent, body.thread, body.dropped)

    @router.post(p.TENANT + p.CONTEXT, response_model=Pack, tags=["lifecycle"])
    async def context(tenant: Tenant, body: p.ContextRequest) -> Pack:
        return await engine.compile_context(
            tenant, body.agent, body.heading, body.at, question=body.question
        )

    @router.post(p.TENANT + p.BELIEFS_BUILD, response_model=BeliefReport, tags=["lifecycle"])
    async def build_beliefs(tenant: Tenant) -> BeliefReport:
        return await engine.build_beliefs(tenant)

    @router.get(p.TENANT + p.DERIVED, response_model=Derived, tags=["lifecycle"])
    async def inspect(tenant: Tenant) -> Derived:
        return await engine.inspect(tenant)


class _EngineRoute(APIRoute):
    """Turns what an engine raises into the protocol's statuses, inside the route itself, so
    no failure escapes as a bare 500 page or a server traceback."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                with _pinned(request):
                    return await handle(request)
            except (RequestValidationError, HTTPException):
                raise
            except Unauthorized:
                return _problem(401, "missing or wrong bearer token")
            except Unsupported as exc:
                return _problem(501, str(exc), capability=exc.capability)
            except KeyReused as exc:
                return _problem(409, str(exc))
            except EngineUnavailable as exc:
                return _problem(503, str(exc) or "engine unavailable")
            except Exception as exc:  # an engine bug is that call's failure, not the server's
                return _problem(500, f"{type(exc).__name__}: {exc}")

        return guarded


def _pinned(request: Request) -> AbstractContextManager[None]:
    """The engine's clock for this call: the case's evaluation time when the client sent one
    (`X-Memeval-Now`), else the wall clock. A malformed value is a 400, never a guess."""
    sent = request.headers.get(p.NOW_HEADER)
    if sent is None:
        return nullcontext()
    try:
        return clock.pinned(datetime.fromisoformat(sent))
    except ValueError:
        raise HTTPException(400, f"{p.NOW_HEADER} is not an ISO 8601 time: {sent!r}") from None


def _problem(status: int, detail: str, **extra: Any) -> JSONResponse:
    body = p.Problem(detail=detail, **extra).model_dump(mode="json", exclude_none=True)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(body, status_code=status, headers=headers)
