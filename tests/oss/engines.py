"""The in-process engines over the stand-in models, as tests build them."""

from __future__ import annotations

from memeval.engines import registry
from memeval.engines.base import Engine

# Engines keeping an embedded database in a folder of their own.
ENGINES = ("mem0-oss", "graphiti")
# Engines of issue 26 (Letta, Cognee, LangMem); LangMem's store lives in the process.
NEXT = ("langmem", "cognee")


def engine_at(name: str, model_url: str, store_dir: str) -> Engine:
    options = f"url={model_url}&store_dir={store_dir}"
    return registry.create(f"{name}&{options}" if "?" in name else f"{name}?{options}")
