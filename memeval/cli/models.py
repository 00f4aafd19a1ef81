"""`memeval models serve`: the stand-in model service that model-backed engines run against."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from memeval.errors import UsageError
from memeval.models import NOTE
from memeval.models.local import DEFAULT_URL

out = Console()
app = typer.Typer(help="Stand-in models for engines built on an LLM and an embedder.")
DEFAULT_PORT = int(DEFAULT_URL.rsplit(":", 1)[1].split("/", 1)[0])


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free port).")
    ] = DEFAULT_PORT,
) -> None:
    """Serve deterministic stand-in models over OpenAI's API (/v1/chat/completions,
    /v1/embeddings, /v1/models), for `mem0-oss` and `graphiti` without weights or a key."""
    from memeval.models.server import base_url, bind, server

    try:
        sock = bind(host, port)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            fix="stop what listens there, or choose another --port (or --host)",
        ) from None
    # One line a script can read the URL from, then the caveat every figure carries.
    out.print(f"serving stand-in models on {base_url(sock)}", highlight=False, soft_wrap=True)
    out.print(f"note: {NOTE}", highlight=False, soft_wrap=True)
    out.file.flush()  # a pipe buffers: whoever started us waits for the URL
    server(sock).run(sockets=[sock])
