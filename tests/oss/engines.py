"""The in-process engines over the stand-in models, as tests build them."""

from __future__ import annotations

import importlib.util

import pytest

from memeval.engines import registry
from memeval.engines.base import Engine

# Engines keeping an embedded database in a folder of their own.
ENGINES = ("mem0-oss", "graphiti")
# cognee is not in [test]: its wheel replaces the `kuzu` package graphiti's driver needs.
COGNEE = pytest.param(
    "cognee",
    marks=pytest.mark.skipif(
        importlib.util.find_spec("cognee") is None,
        reason="cognee is not installed: pip install 'memeval[cognee]' in an environment "
        "without memeval[graphiti] (cognee's wheel overwrites the kuzu package)",
    ),
)
# Engines of issue 26; LangMem's store lives in the process, cognee's in a folder.
NEXT = ("langmem", COGNEE)


def engine_at(name: str, model_url: str, store_dir: str) -> Engine:
    options = f"url={model_url}&store_dir={store_dir}"
    return registry.create(f"{name}&{options}" if "?" in name else f"{name}?{options}")
