"""What an in-process engine over a model-backed library shares: where its models are, a
proof that they answer, a private folder for its embedded database, and packs composed from
one search of the library per pack.

Embedded stores (qdrant, Kuzu) lock their folder, and a worker process may hold several engines
while its siblings hold their own, so every engine instance gets a fresh folder of its own,
removed when the engine closes or, failing that, when the process exits.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import httpx
from pydantic import Field, SecretStr

from memeval.embeddings.weights import DIMENSIONS
from memeval.engines.adapters import packs
from memeval.engines.adapters.packs import pack_of
from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.base import Engine
from memeval.engines.types import Pack, Turn, TurnContext
from memeval.errors import EngineUnavailable, UsageError
from memeval.models import CHAT_MODEL, EMBED_MODEL

DEFAULT_URL = "http://127.0.0.1:8765/v1"
NO_KEY = "no-key"  # OpenAI's client refuses an empty key; a local service ignores this one


class ModelSettings(EngineSettings):
    """The models an engine's library calls, on any OpenAI-compatible service."""

    url: str = Field(
        default=DEFAULT_URL,
        description="OpenAI-compatible base URL of the engine's LLM (`memeval models serve`, "
        "vLLM, Ollama, OpenRouter).",
    )
    embedder_url: str | None = Field(
        default=None, description="Base URL of the embedder, when it is not `url`."
    )
    api_key: SecretStr | None = Field(default=None, description="Key for the model service.")
    llm_model: str = Field(default=CHAT_MODEL, description="Chat model the library calls.")
    embedder_model: str = Field(default=EMBED_MODEL, description="Embedding model.")
    embedding_dims: int = Field(default=DIMENSIONS, gt=0, description="Embedding size.")
    store_dir: str | None = Field(
        default=None, description="Folder for the per-engine store folders (default: temp)."
    )

    @property
    def key(self) -> str:
        return self.api_key.get_secret_value() if self.api_key else NO_KEY

    @property
    def embedder_base(self) -> str:
        return self.embedder_url or self.url

    def models(self) -> list[str]:
        chat = f"chat {self.llm_model} at {self.url}"
        if self.llm_model == CHAT_MODEL:
            chat += " (a stand-in: sentences, no language model)"
        return [f"embeddings {self.embedder_model} at {self.embedder_base}", chat]


async def check_models(engine: str, settings: ModelSettings) -> None:
    """The model list of each service the engine calls, in seconds, so a service that is not
    running fails the run before any case instead of every case after a timeout."""
    for url in dict.fromkeys((settings.url, settings.embedder_base)):
        try:
            async with httpx.AsyncClient(timeout=min(settings.timeout, 10.0)) as client:
                reply = await client.get(
                    f"{url}/models", headers={"Authorization": f"Bearer {settings.key}"}
                )
        except httpx.HTTPError as exc:
            raise EngineUnavailable(
                f"{engine}: no model service answers at {url} ({type(exc).__name__}); start "
                f"one with `memeval models serve`, or point the engine's `url` at vLLM, "
                f"Ollama or OpenRouter"
            ) from None
        if reply.status_code in (401, 403):
            raise UsageError(
                f"{engine}: the model service at {url} refused the key (HTTP {reply.status_code})",
                fix=f"set {settings.env_name('api_key')} to a key it accepts",
            )


def store_folder(engine: str, base: str | None) -> Path:
    """A fresh folder for one engine's embedded database, removed at exit if not before."""
    if base is not None:
        Path(base).mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"memeval-{engine}-", dir=base))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def library_missing(engine: str, module: str, extra: str) -> UsageError:
    return UsageError(
        f"engine `{engine}` needs the `{module}` package, which is not installed",
        fix=f"pip install 'memeval[{extra}]'",
    )


class SearchPacks(packs.SearchPacks, Engine):
    """The lifecycle face of a library that recalls texts but composes no pack: each pack is
    one search, in the library's order, under the usual title and budget. A recalled text
    drawn from a turn the model still sees (whole, or one sentence the library extracted from
    it) is left out, so the pack never repeats the prompt."""

    @staticmethod
    def models_used(settings: ModelSettings) -> list[str]:
        return settings.models()

    async def _pack(self, tenant: str, title: str, text: str, hide: tuple[str, ...] = ()) -> Pack:
        found = await self.recall(tenant, text) if text.strip() else []
        kept = [t for t in found if not any(_flat(t) in turn for turn in hide)]
        pack = pack_of(title, kept)
        pack.abstained = not kept
        return pack

    def _hidden(self, ctx: TurnContext) -> tuple[str, ...]:
        return tuple(_flat(said(t)) for t in ctx.in_prompt)

    async def forget(self, tenant: str) -> None:
        await self.reset(tenant)


def said(turn: Turn) -> str:
    """A turn as these engines write it: `speaker: text`."""
    return f"{turn.speaker or turn.role}: {turn.text}"


def _flat(text: str) -> str:
    return " ".join(text.split()).lower()
