"""`memeval engines`, `memeval serve` and `memeval conformance URL`: what can be evaluated,
serving an engine over memeval's REST protocol, and checking a server that claims to speak it.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
from typing import Annotated

import typer
from pydantic import SecretStr
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memeval.engines.adapters.wire_facts import sourced
from memeval.engines.registry import describe
from memeval.errors import UsageError

out = Console()
HTTP_TOKEN_ENV = "MEMEVAL_HTTP_TOKEN"
TRANSPORT = ("timeout", "retries", "backoff", "retry_after_max")


def engines(
    as_json: Annotated[
        bool, typer.Option("--json", metavar="", help="Print the listing as JSON.")
    ] = False,
) -> None:
    """List installed engines: what each supports and which settings it reads."""
    rows = describe()
    if as_json:
        print(json.dumps([r.model_dump() for r in rows], indent=2))
        return
    table = Table(
        title="engines",
        show_lines=True,
        caption="Remote engines also read PREFIX_TIMEOUT, PREFIX_RETRIES, PREFIX_BACKOFF and "
        "PREFIX_RETRY_AFTER_MAX (or ?timeout= ?retries= ?backoff= ?retry_after_max=); --json "
        "lists everything.",
    )
    for column in ("engine", "capabilities", "settings"):
        table.add_column(column, overflow="fold")
    for row in rows:
        caps = "declared by the server" if row.capabilities is None else ", ".join(row.capabilities)
        settings = []
        for s in row.settings:
            if s.option in TRANSPORT:
                continue
            how = f"{s.env}" + (f" or ?{s.option}=" if s.option else "")
            state = "required" if s.required else f"default {s.default}"
            mark = " (set)" if s.present else (" (MISSING)" if s.required else "")
            settings.append(f"{how}: {state}{mark}")
        name = f"{row.name}\n[dim]{row.origin}[/]"
        # Escaped: a note or fix holding `[mem0]` is text, not a rich style to swallow.
        notes = [f"[yellow]{escape(n)}[/]" for n in row.notes]
        if row.verified_against:
            notes.append(f"[dim]verified against: {escape(row.verified_against)}[/]")
        if (facts := sourced(row.name)) is not None:
            notes.append(f"[dim]wire facts sourced: {facts[0]} of {facts[1]}[/]")
        if row.error:
            notes.append(f"[red]{escape(row.error)}[/]")
        table.add_row(name, "\n".join([caps or "none", *notes]), "\n".join(settings) or "none")
    out.print(table)


def serve(
    engine: Annotated[str, typer.Option(help="Engine to serve: reference, naive, ...")] = (
        "reference"
    ),
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8080,
    token: Annotated[
        str | None,
        typer.Option(help="Bearer token clients must send (else $MEMEVAL_SERVE_TOKEN)."),
    ] = None,
    latency_ms: Annotated[
        float,
        typer.Option(min=0, help="Delay before each answer, like a remote engine."),
    ] = 0.0,
) -> None:
    """Serve an engine over memeval's REST protocol (OpenAPI at /openapi.json)."""
    from memeval.server import serve as run_server
    from memeval.server import serve_token

    secret = serve_token(token)
    check_port(host, port)
    delay = f", {latency_ms:g} ms per request" if latency_ms else ""
    out.print(f"serving `{engine}` on http://{host}:{port}{delay} (OpenAPI at /openapi.json)")
    run_server(engine, host=host, port=port, token=secret, latency_s=latency_ms / 1000)


def check_port(host: str, port: int) -> None:
    """Bind once before the server starts: uvicorn reports a busy port as log lines and exit
    code 3, after the engine was built."""
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            fix="stop what listens there, or choose another --port (or --host)",
        ) from None


def conformance(
    url: Annotated[str, typer.Argument(help="Base URL of the server, e.g. http://host:8080")],
    token: Annotated[
        str | None,
        typer.Option(help=f"Bearer token (else ${HTTP_TOKEN_ENV})."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per request.")] = 10.0,
) -> None:
    """Check that a server speaks memeval's protocol, enforces auth and keeps tenants apart."""
    from memeval.conformance import Verdict, check
    from memeval.engines.adapters.settings import http_url

    secret = token or os.environ.get(HTTP_TOKEN_ENV, "")
    if not secret.strip():
        raise UsageError("conformance needs the server's bearer token", fix=f"set {HTTP_TOKEN_ENV}")
    if not math.isfinite(timeout) or timeout <= 0:
        raise UsageError(
            f"--timeout must be a positive number of seconds, not {timeout:g}",
            fix="e.g. --timeout 10",
        )
    try:
        if any(c.isspace() for c in url):
            raise ValueError(f"`{url}` contains a space")
        url = http_url(url)
    except ValueError as exc:
        raise UsageError(
            str(exc), fix="give the server's base URL, e.g. http://host:8080"
        ) from None
    checks = asyncio.run(check(url, SecretStr(secret.strip()), timeout=timeout))
    table = Table(title=f"conformance: {url}")
    for column in ("check", "result", "detail"):
        table.add_column(column, overflow="fold")
    colour = {Verdict.passed: "green", Verdict.failed: "bold red", Verdict.skipped: "yellow"}
    for c in checks:
        table.add_row(c.name, f"[{colour[c.verdict]}]{c.verdict.value}[/]", c.detail)
    out.print(table)
    failed = sum(c.verdict is Verdict.failed for c in checks)
    if failed:
        out.print(f"[bold red]{failed} of {len(checks)} checks failed[/]")
        raise typer.Exit(1)
    out.print(f"[green]conformant[/]: {len(checks)} checks, none failed")
