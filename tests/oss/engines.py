"""The two in-process engines over the stand-in models, as tests build them."""

from __future__ import annotations

from memeval.engines import registry
from memeval.engines.base import Engine

ENGINES = ("mem0-oss", "graphiti")


def engine_at(name: str, model_url: str, store_dir: str) -> Engine:
    options = f"url={model_url}&store_dir={store_dir}"
    return registry.create(f"{name}&{options}" if "?" in name else f"{name}?{options}")
