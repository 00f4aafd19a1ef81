"""`memeval serve`'s own app in front of the reference engine, on a real port, whose account runs
out: after `--credit N` tenant requests every tenant request answers 402, as a metered service
does once its balance is spent. `/v1/engine` stays free, as a service's status route does.

    python -m tests.infra.credit_server --port P --token T --credit N
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn
from pydantic import SecretStr

from memeval.engines.reference import ReferenceEngine
from memeval.server import create_app

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Metered:
    """ASGI middleware: counts tenant requests and refuses them with 402 past the credit."""

    def __init__(self, app: App, credit: int) -> None:
        self.app = app
        self.credit = credit
        self.used = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/v1/tenants/"):
            self.used += 1
            if self.used > self.credit:
                body = json.dumps({"detail": "insufficient credits: top up your balance"})
                await send(
                    {
                        "type": "http.response.start",
                        "status": 402,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": body.encode()})
                return
        await self.app(scope, receive, send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--credit", type=int, required=True)
    args = parser.parse_args()
    app = Metered(create_app(ReferenceEngine(), SecretStr(args.token)), args.credit)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
