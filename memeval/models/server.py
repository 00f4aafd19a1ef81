"""`memeval models serve`: local models over OpenAI's HTTP API.

Routes are served both under `/v1` and at the root, because clients differ on whether the base
URL carries it. `/v1/models` lists the models in OpenRouter's shape with a price of zero,
which memeval's pricing code reads, so a budget over the stand-in spends nothing. Any model
name is answered: engines ask for their defaults (`gpt-4.1-mini`, `text-embedding-3-small`),
and the served embedder answers every embedding request, naming itself in the reply's `model`.
The embedder loads before the server listens, so a client never waits on the weights.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn
from fastapi import APIRouter, FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from memeval import embeddings
from memeval.embeddings.ngram import embed
from memeval.models import CHAT_MODEL, NOTE
from memeval.models.chat import ChatRequest, reply

CHAT_NOTE = "a stand-in: answers by splitting the input into sentences, no language model"


class EmbeddingRequest(BaseModel):
    model: str
    input: str | list[str] = Field(description="One text or a batch; token arrays are refused.")
    dimensions: int | None = Field(default=None, gt=0, le=8192)
    encoding_format: str | None = None


def create_app(embedder: str = embeddings.DEFAULT) -> FastAPI:
    model = embeddings.load(embedder)
    app = FastAPI(title="memeval models", description=NOTE)
    router = APIRouter()
    about = f"{model.dimensions} dimensions, computed on this machine"

    @router.get("/models")
    def models() -> dict[str, Any]:
        free = {"prompt": "0", "completion": "0"}
        return {
            "object": "list",
            "data": [
                {"id": CHAT_MODEL, "object": "model", "pricing": free, "description": CHAT_NOTE},
                {"id": model.name, "object": "model", "pricing": free, "description": about},
            ],
        }

    @router.post("/embeddings", response_model=None)
    def embed_texts(request: EmbeddingRequest) -> dict[str, Any] | JSONResponse:
        texts = [request.input] if isinstance(request.input, str) else request.input
        size = request.dimensions or model.dimensions
        if embedder == "ngram":  # the hash fills any number of buckets
            vectors = [embed(t, size) for t in texts]
        elif size != model.dimensions:
            message = f"{model.name} has {model.dimensions} dimensions, not {size}"
            refusal = {"message": message, "type": "invalid_request_error"}
            return JSONResponse({"error": refusal}, 400)
        else:
            vectors = model.embed(texts).tolist()
        tokens = sum(len(t) // 4 + 1 for t in texts)
        return {
            "object": "list",
            "model": model.name,
            "data": [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    @router.post("/chat/completions")
    def chat(request: ChatRequest) -> dict[str, Any]:
        return reply(request)

    app.include_router(router, prefix="/v1")
    app.include_router(router)
    return app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, bound before the server starts, so port 0 yields a known port.
    It listens at once: the URL is printed before uvicorn starts, and a client that connects
    in between waits in the backlog instead of being refused (seen under load in CI)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    return sock


def base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/v1"


def server(sock: socket.socket, embedder: str = embeddings.DEFAULT) -> uvicorn.Server:
    config = uvicorn.Config(create_app(embedder), log_level="warning", access_log=False)
    return uvicorn.Server(config)


@contextlib.contextmanager
def running(
    host: str = "127.0.0.1", port: int = 0, embedder: str = embeddings.DEFAULT
) -> Iterator[str]:
    """The service in a thread of this process, for tests and benchmarks; yields its base URL."""
    sock = bind(host, port)
    instance = server(sock, embedder)
    thread = threading.Thread(target=instance.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not instance.started:
            if not thread.is_alive():
                raise RuntimeError("the model service did not start")
            thread.join(0.01)
        yield base_url(sock)
    finally:
        instance.should_exit = True
        thread.join(5)
        sock.close()
