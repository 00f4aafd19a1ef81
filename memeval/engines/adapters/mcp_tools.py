"""Tool calls to a remote MCP server (streamable HTTP) over memeval's one HTTP path.

The official `mcp` client speaks the protocol; underneath it, every HTTP exchange goes through
`transport.Transport`, so an MCP engine gets what every other adapter has: timeouts, retries
with backoff on 429 and 5xx honouring Retry-After (and passed to the farm's limiter), a 401 or
403 that names the key's variable, 402 as credits exhausted, and the key masked out of every
message. The `mcp` client folds a failed HTTP exchange into a generic protocol error inside a
task group, so the bridge keeps the exchange's own error and `call` raises that instead.

One MCP session per engine call (a store's ingest and verify share one): an anyio task group
must be left by the asyncio task that entered it, and one engine serves many cases, each its
own task, so a session shared between them could not be closed safely. The server-sent GET
stream is declined: memeval asks, the server answers, and nothing the server might push
unprompted is needed. `mcp` is imported here only, so the rest of memeval runs without it
(`pip install 'memeval[verifiedstate]'` brings it).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.client import ConnectMode
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import DiscoverResult, TextContent, Tool

from memeval.engines.adapters.transport import RemoteError, Transport

# the protocol's own headers (Mcp-Session-Id, Mcp-Method, ...) pass; what httpx sets does not
NOT_FORWARDED = ("authorization", "connection", "content-length", "host", "accept-encoding")
DROPPED = ("content-encoding", "content-length", "transfer-encoding")
DISCOVER = "server/discover"
"""The `mcp` client's opening probe. A server from before it may answer HTTP 400; handed back
to the client as it came, that makes the client fall back to `initialize` (the protocol's
rule), where a raised error would end the session."""


class Bridge(httpx2.AsyncBaseTransport):
    """The MCP client's HTTP, carried by memeval's `Transport`; keeps the first failure."""

    def __init__(self, transport: Transport, path: str) -> None:
        self.transport = transport
        self.path = path
        self.failure: Exception | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET":
            return httpx2.Response(405, request=request)  # no server-initiated stream wanted
        raw = await request.aread()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in NOT_FORWARDED}
        body = json.loads(raw) if raw else None
        probe = isinstance(body, dict) and body.get("method") == DISCOVER
        try:
            answered = await self.transport.call(
                request.method,
                self.path,
                json=body,
                headers=headers,
                expect_json=False,  # an MCP answer may be an event stream or a bare 202
                accept=(400,) if probe else (),  # an older server: the client falls back
            )
        except Exception as exc:
            self.failure = self.failure or exc
            raise
        kept = [(k, v) for k, v in answered.headers.items() if k.lower() not in DROPPED]
        return httpx2.Response(
            answered.status_code, headers=kept, content=answered.content, request=request
        )


class McpTools:
    """Opens sessions on one MCP endpoint; the first learns the protocol version, the rest
    adopt it instead of probing again."""

    def __init__(self, transport: Transport, url: str, engine: str) -> None:
        self.transport = transport
        self.url = url
        self.path = httpx2.URL(url).raw_path.decode() or "/"
        self.engine = engine
        self._mode: ConnectMode = "auto"
        self._discovered: DiscoverResult | None = None

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Session]:
        bridge = Bridge(self.transport, self.path)
        try:
            async with (
                httpx2.AsyncClient(transport=bridge) as http,
                Client(
                    streamable_http_client(self.url, http_client=http),
                    mode=self._mode,
                    prior_discover=self._discovered,
                ) as client,
            ):
                if self._mode == "auto":
                    self._learn(client)
                yield Session(client, self)
        except BaseException as exc:  # the client's task group may wrap what went wrong
            if bridge.failure is not None:
                raise bridge.failure from None
            leaves = _leaves(exc)
            inner = leaves[0] if len(leaves) == 1 else exc
            if isinstance(inner, MCPError):
                raise RemoteError(f"{self.engine}: MCP session failed: {inner}") from None
            if inner is not exc:
                raise inner from None
            raise

    def _learn(self, client: Client) -> None:
        discovered = client.session.discover_result
        if discovered is None:
            self._mode = "legacy"  # a handshake-era server: initialize every time, no probe
        else:
            self._mode, self._discovered = client.protocol_version, discovered


class Session:
    """Tool calls inside one MCP session; results come back as JSON objects."""

    def __init__(self, client: Client, tools: McpTools) -> None:
        self.client = client
        self.engine = tools.engine
        self.mask = tools.transport.mask

    async def list(self) -> dict[str, Tool]:
        listed = await self.client.list_tools()
        return {tool.name: tool for tool in listed.tools}

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.client.call_tool(name, arguments)
        text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
        if result.is_error:
            raise RemoteError(f"{self.engine}: tool {name} failed: {self.mask(text)}")
        if isinstance(result.structured_content, dict):
            return result.structured_content
        for block in result.content:  # the published hook reads JSON from the text blocks
            if isinstance(block, TextContent):
                try:
                    parsed = json.loads(block.text)
                except ValueError:
                    continue
                if isinstance(parsed, dict):
                    return parsed
        raise RemoteError(f"{self.engine}: tool {name} answered no JSON object: {text[:200]}")


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def properties(tool: Tool) -> set[str]:
    """The argument names a tool's input schema declares."""
    return set((tool.input_schema or {}).get("properties", {}))
