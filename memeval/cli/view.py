"""`memeval view`: the results store in a browser, read-only.

Bound to 127.0.0.1 unless told otherwise; on any other interface it refuses to start without a
token, since a run's packs hold whatever the suites wrote.
"""

from __future__ import annotations

import ipaddress
import os
from typing import Annotated

import typer
from rich.console import Console

from memeval.cli.engines import check_port
from memeval.errors import UsageError

out = Console()
TOKEN_ENV = "MEMEVAL_VIEW_TOKEN"


def view(
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8600,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    token: Annotated[
        str | None,
        typer.Option(help=f"Token a browser or script must show (else ${TOKEN_ENV})."),
    ] = None,
) -> None:
    """Browse the results store in a local web viewer: live runs, cases, compare, leaderboard."""
    import uvicorn

    from memeval.evaluation.store import usable_store
    from memeval.viewer.app import create_app
    from memeval.viewer.discovery import announce, store_key, withdraw

    secret = token or os.environ.get(TOKEN_ENV) or None
    if secret is None and not _loopback(host):
        raise UsageError(
            f"--host {host} lets other machines reach the viewer, so it needs a token",
            fix=f"pass --token TOKEN or set {TOKEN_ENV}, or keep the default --host 127.0.0.1",
        )
    check_port(host, port)
    store = usable_store()
    address = f"http://{host}:{port}"
    note = announce(store_key(store.url), address)
    out.print(
        f"memeval view on {address}/"
        + (" (open it once as /?token=TOKEN)" if secret else "")
        + f" · store {store_key(store.url)}",
        highlight=False,
    )
    try:
        uvicorn.run(create_app(store, secret), host=host, port=port, log_level="warning")
    finally:
        withdraw(note)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
