"""memeval's REST memory protocol, served: any engine memeval can build, reachable over HTTP.

The protocol itself (paths and bodies) lives in `memeval.engines.adapters.protocol`, beside
the `http` engine that is its client; this package is the FastAPI side and its runner.
"""

from __future__ import annotations

import os

from pydantic import SecretStr

from memeval.errors import UsageError
from memeval.server.app import create_app

TOKEN_ENV = "MEMEVAL_SERVE_TOKEN"


def serve_token(given: str | None) -> SecretStr:
    """`--token`, else the environment; serving without one would leave memory open."""
    token = given or os.environ.get(TOKEN_ENV, "")
    if not token.strip():
        raise UsageError(
            "memeval serve needs a bearer token",
            fix=f"set {TOKEN_ENV} (or pass --token); clients send it as MEMEVAL_HTTP_TOKEN",
        )
    return SecretStr(token.strip())


def serve(
    engine_ref: str, *, host: str, port: int, token: SecretStr, latency_s: float = 0.0
) -> None:
    """Serve until interrupted; the app closes the engine as it shuts down."""
    import uvicorn

    from memeval.engines.registry import create

    app = create_app(create(engine_ref), token, latency_s=latency_s)
    uvicorn.run(app, host=host, port=port, log_level="info")


__all__ = ["TOKEN_ENV", "create_app", "serve", "serve_token"]
