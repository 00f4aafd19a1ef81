"""`memeval models serve`: the stand-in models over OpenAI's HTTP API.

Routes are served both under `/v1` and at the root, because clients differ on whether the base
URL carries it. `/v1/models` lists the models in OpenRouter's shape with a price of zero,
which memeval's pricing code reads, so a budget over the stand-in spends nothing. Any model
name is answered: engines ask for their defaults (`gpt-4.1-mini`, `text-embedding-3-small`) and
a stand-in for all of them needs no configuration.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn
from fastapi import APIRouter, FastAPI
from pydantic import BaseModel, Field

from memeval.models import CHAT_MODEL, EMBED_MODEL, NOTE
from memeval.models.chat import ChatRequest, reply
from memeval.models.embeddings import DIMENSIONS, embed


class EmbeddingRequest(BaseModel):
    model: str
    input: str | list[str] = Field(description="One text or a batch; token arrays are refused.")
    dimensions: int | None = Field(default=None, gt=0, le=8192)
    encoding_format: str | None = None


def create_app() -> FastAPI:
    app = FastAPI(title="memeval stand-in models", description=NOTE)
    router = APIRouter()

    @router.get("/models")
    def models() -> dict[str, Any]:
        free = {"prompt": "0", "completion": "0"}
        return {
            "object": "list",
            "data": [
                {"id": CHAT_MODEL, "object": "model", "pricing": free, "description": NOTE},
                {"id": EMBED_MODEL, "object": "model", "pricing": free, "description": NOTE},
            ],
        }

    @router.post("/embeddings")
    def embeddings(request: EmbeddingRequest) -> dict[str, Any]:
        texts = [request.input] if isinstance(request.input, str) else request.input
        size = request.dimensions or DIMENSIONS
        tokens = sum(len(t) // 4 + 1 for t in texts)
        return {
            "object": "list",
            "model": request.model,
            "data": [
                {"object": "embedding", "index": i, "embedding": embed(t, size)}
                for i, t in enumerate(texts)
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
    """A listening socket, bound before the server starts, so port 0 yields a known port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


def base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/v1"


def server(sock: socket.socket) -> uvicorn.Server:
    config = uvicorn.Config(create_app(), log_level="warning", access_log=False)
    return uvicorn.Server(config)


@contextlib.contextmanager
def running(host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """The service in a thread of this process, for tests and benchmarks; yields its base URL."""
    sock = bind(host, port)
    instance = server(sock)
    thread = threading.Thread(target=instance.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not instance.started:
            if not thread.is_alive():
                raise RuntimeError("the stand-in model service did not start")
            thread.join(0.01)
        yield base_url(sock)
    finally:
        instance.should_exit = True
        thread.join(5)
        sock.close()
